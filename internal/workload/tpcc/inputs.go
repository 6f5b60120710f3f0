package tpcc

import (
	"math"
	"slices"
	"time"
)

// Terminal draws the inputs of the five transactions for one virtual user (a terminal of
// clause 2.1): a home warehouse and district, or any warehouse per transaction when
// AllWarehouses; the run's NURand constants; and its own Rand.
type Terminal struct {
	G             *Rand
	C             Constants // the run's constants (RunConstants)
	Warehouses    int
	HomeW, HomeD  int
	AllWarehouses bool
}

// Item is one line of a New-Order.
type Item struct {
	ID, SupplyW, Quantity int
}

// NewOrderInput is what clause 2.4.1 draws.
type NewOrderInput struct {
	W, D, C int
	Items   []Item
	// Rollback is set on the 1% of orders whose last item id is unused (clause 2.4.1.4).
	Rollback bool
	AllLocal bool
}

// PaymentInput is what clause 2.5.1 draws. CLast is empty when the customer is chosen by id.
type PaymentInput struct {
	W, D, CW, CD, C int
	CLast           string
	Amount          int64 // hundredths
}

// OrderStatusInput is what clause 2.6.1 draws. CLast is empty when by id.
type OrderStatusInput struct {
	W, D, C int
	CLast   string
}

// DeliveryInput is what clause 2.7.1 draws.
type DeliveryInput struct{ W, Carrier int }

// StockLevelInput is what clause 2.8.1 draws.
type StockLevelInput struct{ W, D, Threshold int }

// Percentages of the inputs (clauses 2.4.1 to 2.6.1).
const (
	rollbackPercent   = 1
	remoteItemPercent = 1
	remotePayPercent  = 15
	byNamePercent     = 60
	unusedItem        = Items + 1 // an item id that does not exist (clause 2.4.1.5)
)

func (t *Terminal) warehouse() int {
	if t.AllWarehouses {
		return t.G.Int(1, t.Warehouses)
	}
	return t.HomeW
}

// otherWarehouse returns a warehouse other than w, or w when there is only one.
func (t *Terminal) otherWarehouse(w int) int {
	if t.Warehouses == 1 {
		return w
	}
	o := t.G.Int(1, t.Warehouses-1)
	if o >= w {
		o++
	}
	return o
}

func (t *Terminal) customerID() int { return t.G.NURand(aCID, t.C.CID, 1, CustomersPerDistrict) }

func (t *Terminal) lastName() string {
	return string(LastName(nil, t.G.NURand(aCLast, t.C.CLast, 0, 999)))
}

// NewOrder draws a New-Order's input. Items are sorted by supply warehouse and item so that
// concurrent orders lock stock rows in the same order; the unused item stays last.
func (t *Terminal) NewOrder() NewOrderInput {
	g := t.G
	in := NewOrderInput{W: t.warehouse(), D: g.Int(1, DistrictsPerWH), C: t.customerID(), AllLocal: true}
	n := g.Int(MinOLCnt, MaxOLCnt)
	in.Rollback = g.Int(1, 100) <= rollbackPercent
	in.Items = make([]Item, n)
	for i := range in.Items {
		it := Item{ID: g.NURand(aOLIID, t.C.OLIID, 1, Items), SupplyW: in.W, Quantity: g.Int(1, 10)}
		if g.Int(1, 100) <= remoteItemPercent && t.Warehouses > 1 {
			it.SupplyW = t.otherWarehouse(in.W)
			in.AllLocal = false
		}
		in.Items[i] = it
	}
	if in.Rollback {
		in.Items[n-1].ID = unusedItem
	}
	slices.SortStableFunc(in.Items, func(a, b Item) int {
		if (a.ID == unusedItem) != (b.ID == unusedItem) {
			return boolInt(a.ID == unusedItem) - boolInt(b.ID == unusedItem)
		}
		if a.SupplyW != b.SupplyW {
			return a.SupplyW - b.SupplyW
		}
		return a.ID - b.ID
	})
	return in
}

// Payment draws a Payment's input.
func (t *Terminal) Payment() PaymentInput {
	g := t.G
	in := PaymentInput{W: t.warehouse(), D: g.Int(1, DistrictsPerWH)}
	in.CW, in.CD = in.W, in.D
	if g.Int(1, 100) <= remotePayPercent && t.Warehouses > 1 {
		in.CW, in.CD = t.otherWarehouse(in.W), g.Int(1, DistrictsPerWH)
	}
	if g.Int(1, 100) <= byNamePercent {
		in.CLast = t.lastName()
	} else {
		in.C = t.customerID()
	}
	in.Amount = g.Cents(100, 500000)
	return in
}

// OrderStatus draws an Order-Status's input.
func (t *Terminal) OrderStatus() OrderStatusInput {
	g := t.G
	in := OrderStatusInput{W: t.warehouse(), D: g.Int(1, DistrictsPerWH)}
	if g.Int(1, 100) <= byNamePercent {
		in.CLast = t.lastName()
	} else {
		in.C = t.customerID()
	}
	return in
}

// Delivery draws a Delivery's input.
func (t *Terminal) Delivery() DeliveryInput {
	return DeliveryInput{W: t.warehouse(), Carrier: t.G.Int(1, 10)}
}

// StockLevel draws a Stock-Level's input: the terminal's own district (clause 2.8.1.1).
func (t *Terminal) StockLevel() StockLevelInput {
	w, d := t.HomeW, t.HomeD
	if t.AllWarehouses {
		w, d = t.warehouse(), t.G.Int(1, DistrictsPerWH)
	}
	return StockLevelInput{W: w, D: d, Threshold: t.G.Int(10, 20)}
}

// Keying times and mean think times of clause 5.2.5.7, by transaction.
var (
	keyingTime = [numKinds]time.Duration{NewOrder: 18 * time.Second, Payment: 3 * time.Second,
		OrderStatus: 2 * time.Second, Delivery: 2 * time.Second, StockLevel: 2 * time.Second}
	meanThinkTime = [numKinds]time.Duration{NewOrder: 12 * time.Second, Payment: 12 * time.Second,
		OrderStatus: 10 * time.Second, Delivery: 5 * time.Second, StockLevel: 5 * time.Second}
)

// KeyingTime is the fixed keying time before a transaction of kind k (clause 5.2.5.7).
func KeyingTime(k Kind) time.Duration { return keyingTime[k] }

// ThinkTime draws the think time after a transaction of kind k: negative exponential with the
// clause's mean, truncated at ten times the mean (clause 5.2.5.4).
func (t *Terminal) ThinkTime(k Kind) time.Duration {
	r := float64(t.G.Int(1, 1<<30)) / float64(1<<30)
	d := time.Duration(-math.Log(r) * float64(meanThinkTime[k]))
	return min(d, 10*meanThinkTime[k])
}
