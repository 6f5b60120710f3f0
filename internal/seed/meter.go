package seed

import (
	"sort"
	"sync"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
)

// Phases of a seeding, in the order they run (the article's steps).
const (
	PhaseCheckpoint = result.SeedPhaseCheckpoint // the primary's checkpoint that starts the backup
	PhaseTransfer   = result.SeedPhaseTransfer   // direct: files streamed into the new data folder
	PhaseBackup     = result.SeedPhaseBackup     // backup-restore: files streamed into the backup folder
	PhaseRestore    = result.SeedPhaseRestore    // backup-restore: the backup extracted into the data folder
	PhaseSync       = result.SeedPhaseSync       // the new data folder flushed to disk (fsync)
	PhaseStart      = result.SeedPhaseStart      // the standby started, until it accepts connections
	PhaseCatchUp    = result.SeedPhaseCatchUp    // until it streams with replay lag under the threshold
	PhaseJoin       = result.SeedPhaseJoin       // added to the topology (and synchronous_standby_names)
	PhaseSyncCommit = result.SeedPhaseSyncCommit
)

// PhaseUse is one phase's duration and the resources used during it.
type PhaseUse = result.SeedPhase

// Progress is one reading of a seeding under way.
type Progress struct {
	At      time.Time     `json:"at"`
	Elapsed time.Duration `json:"elapsed"`
	// Phase is the seeding's phase; ServerPhase is pg_stat_progress_basebackup's phase.
	Phase       string `json:"phase"`
	ServerPhase string `json:"server_phase,omitempty"`
	// Done and Total are bytes of the phase's work: streamed of the server's estimate during
	// a transfer or backup, backup bytes read of the backup's size during a restore.
	Done  int64 `json:"done"`
	Total int64 `json:"total"`
	// Rate is bytes per second over the last few seconds; ETA is the time left at that rate
	// (-1 when unknown).
	Rate float64       `json:"rate"`
	ETA  time.Duration `json:"eta"`
	// Wait says what the sending walsender waits on, in words; WaitEvent is its raw wait event.
	Wait      string `json:"wait,omitempty"`
	WaitEvent string `json:"wait_event,omitempty"`
	// WireBytes is what crossed the wire so far (compressed as sent), when measured.
	WireBytes int64 `json:"wire_bytes,omitempty"`
	// LagBytes is the new standby's replay lag during catch-up; nil until the primary
	// reports its replay position (absent, not 0).
	LagBytes *int64 `json:"lag_bytes,omitempty"`
	// CPU in cores over the last interval.
	SenderCores   float64 `json:"sender_cores"`
	ReceiverCores float64 `json:"receiver_cores"`
	// The busiest watched device: its name, MB/s read and written, utilisation (0..1).
	Device    string  `json:"device,omitempty"`
	ReadMBps  float64 `json:"read_mbps"`
	WriteMBps float64 `json:"write_mbps"`
	DiskUtil  float64 `json:"disk_util"`
}

// procWatch follows one process's CPU between readings.
type procWatch struct {
	pid  int
	last ProcCPU
	io   ProcIO
}

// rateWindow is how far back Progress.Rate looks.
const rateWindow = 3 * time.Second

type donePoint struct {
	at   time.Time
	done int64
}

// meter attributes CPU and device bytes to the current phase on every tick and keeps the
// series. All methods are safe for concurrent use.
type meter struct {
	mu         sync.Mutex
	start      time.Time
	phase      string
	phaseStart time.Time
	phases     []PhaseUse
	os         *sample.OSSampler
	sender     procWatch
	receiver   procWatch
	self       bool // the receiver is this process (restore, sync)
	selfLast   time.Duration
	lastTick   time.Time
	series     map[string]*result.TimeSeries
	waits      map[string]int
	recent     []donePoint
	cur        Progress
	emit       func(Progress)
	// wire, when set, returns the bytes on the wire so far (the wire meter's count).
	wire func() int64
}

func newMeter(osSampler *sample.OSSampler, emit func(Progress)) *meter {
	now := time.Now()
	return &meter{start: now, lastTick: now, os: osSampler, series: map[string]*result.TimeSeries{}, waits: map[string]int{}, emit: emit}
}

func (m *meter) add(name, unit string, at time.Time, v float64) {
	result.AddPoint(m.series, name, unit, m.start, at, v)
}

// enter ends the current phase (a last tick is attributed to it) and starts the next.
func (m *meter) enter(phase string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	m.tickLocked(now)
	if m.phase != "" {
		m.phaseLocked().Seconds = now.Sub(m.phaseStart).Seconds()
	}
	m.phase, m.phaseStart = phase, now
	if phase != "" {
		m.phases = append(m.phases, PhaseUse{Name: phase})
	}
	m.cur = Progress{At: now, Elapsed: now.Sub(m.start), Phase: phase, ETA: -1}
	m.recent = nil
	if emit := m.emit; emit != nil && phase != "" {
		out := m.cur
		m.mu.Unlock()
		emit(out)
		m.mu.Lock()
	}
}

// current is the phase under way.
func (m *meter) current() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.phase
}

// phaseLocked is the current phase's figures; between phases, a sink that is not kept.
func (m *meter) phaseLocked() *PhaseUse {
	if m.phase == "" || len(m.phases) == 0 {
		return &PhaseUse{}
	}
	return &m.phases[len(m.phases)-1]
}

// watchSender and watchReceiver set the processes whose CPU counts (0: none).
func (m *meter) watchSender(pid int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sender.pid == pid {
		return
	}
	m.sender = procWatch{pid: pid}
	if cpu, pio, ok := readProc(pid); ok {
		m.sender.last, m.sender.io = cpu, pio
	}
}

func (m *meter) watchReceiver(pid int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.receiver = procWatch{pid: pid}
	m.self = false
}

// setWire sets (or, with nil, clears) the source of Progress.WireBytes.
func (m *meter) setWire(f func() int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wire = f
}

// watchSelf makes this process the receiver (restore and sync are done by agbench).
func (m *meter) watchSelf() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.receiver = procWatch{}
	m.self = true
	m.selfLast, _ = sample.SelfCPU()
}

// finishReceiver takes the last reading of an exited, not yet reaped receiver (a zombie's
// /proc/PID/stat still holds its CPU totals, its reaped WAL child included) and stops
// watching it.
func (m *meter) finishReceiver() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tickLocked(time.Now())
	m.receiver = procWatch{}
}

// observe records a reading of the server's progress (or of the restore) and emits Progress;
// lag is nil when the standby's replay lag was not read.
func (m *meter) observe(serverPhase string, done, total int64, waitType, waitEvent string, lag *int64) {
	m.mu.Lock()
	now := time.Now()
	m.tickLocked(now)
	p := &m.cur
	p.ServerPhase, p.Done, p.Total, p.LagBytes = serverPhase, done, total, lag
	p.WaitEvent, p.Wait = "", ""
	if waitType != "" || waitEvent != "" || serverPhase != "" {
		if waitType != "" {
			p.WaitEvent = waitType + ":" + waitEvent
		}
		p.Wait = waitCategory(waitType, waitEvent)
		if m.phase == PhaseTransfer || m.phase == PhaseBackup {
			m.waits[p.Wait]++
		}
	}
	m.recent = append(m.recent, donePoint{now, done})
	for len(m.recent) > 2 && now.Sub(m.recent[0].at) > rateWindow {
		m.recent = m.recent[1:]
	}
	p.Rate, p.ETA = 0, -1
	if first := m.recent[0]; now.Sub(first.at) > 0 && done >= first.done {
		p.Rate = float64(done-first.done) / now.Sub(first.at).Seconds()
	}
	if p.Rate > 0 && total > done {
		p.ETA = time.Duration(float64(total-done) / p.Rate * float64(time.Second))
	} else if total > 0 && done >= total {
		p.ETA = 0
	}
	m.add("seed.done_bytes", "bytes", now, float64(done))
	m.add("seed.rate_mbps", "MB/s", now, p.Rate/1e6)
	if m.wire != nil {
		p.WireBytes = m.wire()
		m.add("seed.wire_bytes", "bytes", now, float64(p.WireBytes))
	}
	if lag != nil {
		m.add("seed.lag_bytes", "bytes", now, float64(*lag))
	}
	out := *p
	emit := m.emit
	m.mu.Unlock()
	if emit != nil {
		emit(out)
	}
}

// tick reads /proc and the devices and attributes what changed to the current phase.
func (m *meter) tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tickLocked(time.Now())
}

func (m *meter) tickLocked(now time.Time) {
	secs := now.Sub(m.lastTick).Seconds()
	m.lastTick = now
	ph := m.phaseLocked()
	p := &m.cur
	p.At, p.Elapsed, p.Phase = now, now.Sub(m.start), m.phase
	if cpu, pio, ok := readProc(m.sender.pid); ok {
		d := cpu.Seconds() - m.sender.last.Seconds()
		ph.SenderCPUSeconds += d
		m.sender.last, m.sender.io = cpu, pio
		p.SenderCores = rate(d, secs)
	} else {
		p.SenderCores = 0
	}
	var recv float64
	switch {
	case m.self:
		if c, err := sample.SelfCPU(); err == nil {
			recv = (c - m.selfLast).Seconds()
			m.selfLast = c
		}
	default:
		if cpu, pio, ok := readProc(m.receiver.pid); ok {
			recv = cpu.Seconds() - m.receiver.last.Seconds()
			m.receiver.last, m.receiver.io = cpu, pio
		}
	}
	ph.ReceiverCPUSeconds += recv
	p.ReceiverCores = rate(recv, secs)
	m.add("seed.sender_cpu_cores", "cores", now, p.SenderCores)
	m.add("seed.receiver_cpu_cores", "cores", now, p.ReceiverCores)
	if m.os == nil {
		return
	}
	s, err := m.os.Sample()
	if err != nil {
		return
	}
	p.Device, p.ReadMBps, p.WriteMBps, p.DiskUtil = "", 0, 0, 0
	disks := append([]sample.DiskRates(nil), s.Disks...)
	sort.Slice(disks, func(i, j int) bool { return disks[i].Util > disks[j].Util })
	for i, d := range disks {
		ph.DiskReadBytes += int64(d.ReadMBps * 1e6 * s.Seconds)
		ph.DiskWriteBytes += int64(d.WriteMBps * 1e6 * s.Seconds)
		m.add(result.DiskName(d.Device, result.DiskReadMBps), "MB/s", now, d.ReadMBps)
		m.add(result.DiskName(d.Device, result.DiskWriteMBps), "MB/s", now, d.WriteMBps)
		m.add(result.DiskName(d.Device, result.DiskUtil), "share", now, d.Util)
		if i == 0 {
			p.Device, p.ReadMBps, p.WriteMBps, p.DiskUtil = d.Device, d.ReadMBps, d.WriteMBps, d.Util
		}
	}
	m.add(result.OSCPUBusy, "share", now, s.CPU.Busy())
	m.add(result.OSCPUSteal, "share", now, s.CPU.Steal)
}

func rate(d, secs float64) float64 {
	if secs <= 0 || d < 0 {
		return 0
	}
	return d / secs
}

// finish ends the last phase and returns phases, series and wait counts.
func (m *meter) finish() ([]PhaseUse, map[string]result.TimeSeries, map[string]int) {
	m.enter("")
	m.mu.Lock()
	defer m.mu.Unlock()
	series := make(map[string]result.TimeSeries, len(m.series))
	for k, v := range m.series {
		series[k] = *v
	}
	return append([]PhaseUse(nil), m.phases...), series, m.waits
}

// waitCategory says in words what a walsender's wait event means for a backup.
func waitCategory(typ, ev string) string {
	switch ev {
	case "BaseBackupRead":
		return "disk read (primary)"
	case "BaseBackupWrite", "BaseBackupSync":
		return "disk write (primary)"
	case "BaseBackupThrottle":
		return "max-rate throttle"
	case "ClientWrite":
		return "network/receiver"
	}
	switch typ {
	case "":
		return "CPU (sender)" // running, or runnable and waiting for a CPU
	case "IO":
		return "disk (" + ev + ")"
	}
	return typ + ":" + ev
}
