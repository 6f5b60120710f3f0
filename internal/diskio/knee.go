package diskio

// Point is one row of a sweep as the knee finder sees it.
type Point struct {
	// Load is the IOs kept outstanding (threads x QD).
	Load   float64
	IOPS   float64
	MeanUs float64
}

// SaturationShare: the sweep saturates at its first row within this share of the best
// throughput; more load after it buys (almost) nothing.
const SaturationShare = 0.95

// Marks are the three places on the load curve the storage article asks for.
type Marks struct {
	// Characteristic is the row of lowest load: the device's characteristic latency.
	Characteristic int `json:"characteristic"`
	// Knee is the row of highest power (throughput / latency, Kleinrock): past it, latency
	// grows faster than throughput.
	Knee int `json:"knee"`
	// Saturation is the first row within SaturationShare of the best throughput.
	Saturation int    `json:"saturation"`
	Method     string `json:"method"`
}

// FindMarks marks the curve given in order of increasing load; nil with fewer than three
// rows. This is the simple first method; internal/analyze is to replace it.
func FindMarks(pts []Point) *Marks {
	if len(pts) < 3 {
		return nil
	}
	m := &Marks{Method: "power = IOPS / mean latency (Kleinrock); saturation at 95% of peak IOPS"}
	best, peak := -1.0, 0.0
	for i, p := range pts {
		if p.Load < pts[m.Characteristic].Load {
			m.Characteristic = i
		}
		if p.MeanUs > 0 && p.IOPS/p.MeanUs > best {
			best, m.Knee = p.IOPS/p.MeanUs, i
		}
		peak = max(peak, p.IOPS)
	}
	for i, p := range pts {
		if p.IOPS >= SaturationShare*peak {
			m.Saturation = i
			break
		}
	}
	m.Saturation = max(m.Saturation, m.Knee)
	return m
}
