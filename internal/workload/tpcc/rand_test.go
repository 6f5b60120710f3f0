package tpcc

import (
	"strings"
	"testing"
	"time"
)

func TestNURandRange(t *testing.T) {
	g := NewRand(1, 1)
	cases := []struct{ a, c, x, y int }{{aCLast, 123, 0, 999}, {aCID, 517, 1, 3000}, {aOLIID, 8000, 1, 100000}}
	for _, tc := range cases {
		seen := map[int]int{}
		for i := 0; i < 200000; i++ {
			v := g.NURand(tc.a, tc.c, tc.x, tc.y)
			if v < tc.x || v > tc.y {
				t.Fatalf("NURand(%d, %d, %d, %d) = %d, out of range", tc.a, tc.c, tc.x, tc.y, v)
			}
			seen[v]++
		}
		// Non-uniform: the most frequent value is far above the uniform expectation.
		maxN := 0
		for _, n := range seen {
			maxN = max(maxN, n)
		}
		uniform := 200000 / (tc.y - tc.x + 1)
		if maxN < 3*max(uniform, 1) {
			t.Errorf("NURand(A=%d) looks uniform: max count %d, uniform %d", tc.a, maxN, uniform)
		}
		if len(seen) < (tc.y-tc.x+1)/4 {
			t.Errorf("NURand(A=%d) reached only %d of %d values", tc.a, len(seen), tc.y-tc.x+1)
		}
	}
}

func TestRunConstantsDelta(t *testing.T) {
	for seed := uint64(0); seed < 500; seed++ {
		g := NewRand(seed, 7)
		load := NewConstants(g)
		run := RunConstants(g, load)
		d := run.CLast - load.CLast
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 {
			t.Fatalf("seed %d: C_LAST load %d run %d, delta %d breaks clause 2.1.6.1", seed, load.CLast, run.CLast, d)
		}
		if run.CLast < 0 || run.CLast > 255 || run.CID < 0 || run.CID > 1023 || run.OLIID < 0 || run.OLIID > 8191 {
			t.Fatalf("seed %d: constants out of range: %+v", seed, run)
		}
	}
	if ValidCLastDelta(100, 4) || ValidCLastDelta(0, 112) || !ValidCLastDelta(0, 65) || ValidCLastDelta(0, 120) {
		t.Fatal("ValidCLastDelta gets the clause's edges wrong")
	}
}

func TestStrings(t *testing.T) {
	g := NewRand(3, 3)
	lens := map[int]bool{}
	originals := 0
	const n = 20000
	for i := 0; i < n; i++ {
		a := g.AString(nil, 14, 24)
		if len(a) < 14 || len(a) > 24 {
			t.Fatalf("a-string of length %d, want 14..24", len(a))
		}
		lens[len(a)] = true
		num := g.NString(nil, 16, 16)
		if len(num) != 16 || strings.Trim(string(num), "0123456789") != "" {
			t.Fatalf("n-string %q", num)
		}
		z := g.Zip(nil)
		if len(z) != 9 || !strings.HasSuffix(string(z), "11111") {
			t.Fatalf("zip %q", z)
		}
		st := g.LString(nil, 2)
		if len(st) != 2 || strings.Trim(string(st), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Fatalf("state %q", st)
		}
		d := g.Data(nil, 26, 50)
		if len(d) < 26 || len(d) > 50 {
			t.Fatalf("data of length %d", len(d))
		}
		if strings.Contains(string(d), original) {
			originals++
		}
	}
	if len(lens) != 11 {
		t.Errorf("a-string lengths seen: %d of 11", len(lens))
	}
	// 10% ORIGINAL (clause 4.3.3.1): 2000 expected; the binomial's sd is 42.
	if originals < 1800 || originals > 2200 {
		t.Errorf("%d of %d data strings hold ORIGINAL, want about 10%%", originals, n)
	}
}

func TestLastName(t *testing.T) {
	// The examples of clause 4.3.2.3.
	for n, want := range map[int]string{371: "PRICALLYOUGHT", 40: "BARPRESBAR", 0: "BARBARBAR", 999: "EINGEINGEING"} {
		if got := string(LastName(nil, n)); got != want {
			t.Errorf("LastName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestDeckProportions(t *testing.T) {
	d := NewDeck(NewRand(9, 9))
	if d.Len() != 100 {
		t.Fatalf("deck of %d cards, want 100", d.Len())
	}
	var passes [3][]Kind
	for p := range passes {
		var count [numKinds]int
		for i := 0; i < d.Len(); i++ {
			k := d.Next()
			count[k]++
			passes[p] = append(passes[p], k)
		}
		// Every pass holds exactly the mix of clause 5.2.4.2.
		if count != Mix {
			t.Fatalf("pass %d: counts %v, want %v", p, count, Mix)
		}
	}
	same := true
	for i := range passes[0] {
		same = same && passes[0][i] == passes[1][i] && passes[1][i] == passes[2][i]
	}
	if same {
		t.Fatal("the deck is not reshuffled between passes")
	}
}

func TestTerminalInputs(t *testing.T) {
	g := NewRand(5, 5)
	term := &Terminal{G: g, C: RunConstants(g, NewConstants(g)), Warehouses: 4, HomeW: 2, HomeD: 7}
	const n = 100000
	var rollbacks, items, remoteItems, remotePay, byName int
	for i := 0; i < n; i++ {
		no := term.NewOrder()
		if no.W != 2 || no.D < 1 || no.D > 10 || no.C < 1 || no.C > 3000 || len(no.Items) < 5 || len(no.Items) > 15 {
			t.Fatalf("new-order input %+v", no)
		}
		if no.Rollback {
			rollbacks++
			if no.Items[len(no.Items)-1].ID != unusedItem {
				t.Fatalf("rolled-back order without its unused item last: %+v", no.Items)
			}
		}
		for _, it := range no.Items {
			items++
			if it.SupplyW != no.W {
				remoteItems++
			}
		}
		p := term.Payment()
		if p.CW != p.W {
			remotePay++
		}
		if p.CLast != "" {
			byName++
		}
		if p.Amount < 100 || p.Amount > 500000 {
			t.Fatalf("payment amount %d", p.Amount)
		}
		if sl := term.StockLevel(); sl.W != 2 || sl.D != 7 || sl.Threshold < 10 || sl.Threshold > 20 {
			t.Fatalf("stock-level input %+v", sl)
		}
	}
	within := func(name string, got, total int, pct float64) {
		want := float64(total) * pct / 100
		if float64(got) < want*0.9 || float64(got) > want*1.1 {
			t.Errorf("%s: %d of %d, want about %.0f%%", name, got, total, pct)
		}
	}
	within("rolled-back orders", rollbacks, n, 1)
	within("remote items", remoteItems, items, 1)
	within("remote payments", remotePay, n, 15)
	within("payments by name", byName, n, 60)

	one := &Terminal{G: g, C: term.C, Warehouses: 1, HomeW: 1, HomeD: 1}
	for i := 0; i < 10000; i++ {
		if p := one.Payment(); p.CW != 1 {
			t.Fatal("remote payment with one warehouse")
		}
	}
}

func TestThinkTimeAndKeying(t *testing.T) {
	g := NewRand(11, 11)
	term := &Terminal{G: g, Warehouses: 1, HomeW: 1, HomeD: 1}
	for _, k := range Kinds {
		var sum time.Duration
		const n = 20000
		for i := 0; i < n; i++ {
			d := term.ThinkTime(k)
			if d < 0 || d > 10*meanThinkTime[k] {
				t.Fatalf("%s: think time %v outside [0, 10 × mean]", k, d)
			}
			sum += d
		}
		mean := sum / n
		if mean < meanThinkTime[k]*95/100 || mean > meanThinkTime[k]*105/100 {
			t.Errorf("%s: mean think time %v, want about %v (clause 5.2.5.7)", k, mean, meanThinkTime[k])
		}
	}
	if KeyingTime(NewOrder) != 18*time.Second || KeyingTime(Payment) != 3*time.Second || KeyingTime(StockLevel) != 2*time.Second {
		t.Error("keying times differ from clause 5.2.5.7")
	}
}

func TestAllWarehouses(t *testing.T) {
	g := NewRand(12, 12)
	term := &Terminal{G: g, C: NewConstants(g), Warehouses: 5, HomeW: 3, HomeD: 2, AllWarehouses: true}
	seen := map[int]bool{}
	for i := 0; i < 1000; i++ {
		seen[term.NewOrder().W] = true
		seen[term.StockLevel().W] = true
	}
	if len(seen) != 5 {
		t.Fatalf("--all-warehouses reached warehouses %v, want all 5", seen)
	}
}
