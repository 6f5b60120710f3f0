package tpcc

import "github.com/agbench/agbench/internal/result"

// Kind is one of the five TPC-C transactions.
type Kind int

// The five transactions, in the order of the specification (clauses 2.4 to 2.8).
const (
	NewOrder Kind = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	numKinds
)

// Kinds lists every transaction kind.
var Kinds = []Kind{NewOrder, Payment, OrderStatus, Delivery, StockLevel}

// String returns HammerDB's short name of the transaction, used in tables and results
// (result.TPCCOps).
func (k Kind) String() string {
	if k >= 0 && k < numKinds {
		return result.TPCCOps[k]
	}
	return "?"
}

// ReadOnly reports whether the transaction only reads (Order-Status and Stock-Level), so that
// --read-intent may run it on a standby.
func (k Kind) ReadOnly() bool { return k == OrderStatus || k == StockLevel }

// Mix is the number of cards of each kind in one deck. Clause 5.2.4.2 lets a terminal pick
// transactions from a deck holding the required mix, shuffled anew after every pass, so that
// the minimum percentages of clause 5.2.3 (Payment 43%, Order-Status, Delivery and Stock-Level
// 4% each) hold over each cycle rather than only on average; New-Order takes the rest.
var Mix = [numKinds]int{NewOrder: 45, Payment: 43, OrderStatus: 4, Delivery: 4, StockLevel: 4}

// Deck deals transactions from a shuffled deck of the Mix, reshuffled after every pass.
type Deck struct {
	g     *Rand
	cards []Kind
	next  int
}

// NewDeck returns a deck that shuffles with g.
func NewDeck(g *Rand) *Deck {
	d := &Deck{g: g}
	for k, n := range Mix {
		for i := 0; i < n; i++ {
			d.cards = append(d.cards, Kind(k))
		}
	}
	d.next = len(d.cards)
	return d
}

// Len is the number of cards in one pass.
func (d *Deck) Len() int { return len(d.cards) }

// Next deals the next transaction.
func (d *Deck) Next() Kind {
	if d.next == len(d.cards) {
		d.g.Shuffle(len(d.cards), func(i, j int) { d.cards[i], d.cards[j] = d.cards[j], d.cards[i] })
		d.next = 0
	}
	k := d.cards[d.next]
	d.next++
	return k
}
