package tpcc

// Cardinalities of the initial database (clause 1.2 and 4.3.3.1).
const (
	Items                = 100000 // ITEM rows, and STOCK rows per warehouse
	DistrictsPerWH       = 10
	CustomersPerDistrict = 3000
	OrdersPerDistrict    = 3000
	// FirstUndelivered is the first initial order without a carrier: orders 2101..3000 of each
	// district are undelivered and have a NEW-ORDER row (clause 4.3.3.1).
	FirstUndelivered = 2101
	// NamedCustomers is how many customers per district take their last name from their id;
	// the others draw it with NURand(255, 0, 999) (clause 4.3.3.1, C_LAST).
	NamedCustomers = 1000
	MinOLCnt       = 5
	MaxOLCnt       = 15
)

// Constants of NURand's A (clause 2.1.6).
const (
	aCLast = 255
	aCID   = 1023
	aOLIID = 8191
)

// MaxWarehouses bounds --warehouses; ids are int4 and the data of 100k warehouses is
// about 10 TB, which is beyond what this tool is for.
const MaxWarehouses = 100000
