package plot

// The colours of meanings. Every figure, and the HTML report around them,
// draws a meaning in its colour and nothing else in it, so that a reader
// learns the colours once: green is computation wherever it appears, and
// vermillion is waiting. They are Okabe and Ito's colours, told apart by
// most colour-blind readers.
const (
	// Computation is time in the application's own code.
	Computation = "#009e73"
	// Communication is time in MPI moving data: point-to-point calls
	// and their completions, a transfer's bandwidth share.
	Communication = "#0072b2"
	// Collective is time in collective operations.
	Collective = "#56b4e9"
	// Latency is the latency share of communication.
	Latency = "#e69f00"
	// Waiting is time blocked in MPI for a late partner.
	Waiting = "#d55e00"
	// OtherMPI is time in the other MPI calls: initialisation,
	// communicators, probes.
	OtherMPI = "#999999"
	// Slow marks abnormally slow instances.
	Slow = "#cc79a7"
)

// Part is one meaning of a stacked figure: its name in the legend and its
// colour, one of the colours of meanings.
type Part struct {
	Name, Color string
}

// lineStyles draw series that have no meaning of their own (what-if
// scales, communication patterns): shades of grey with their own dashes
// and markers, so that no series takes a meaning's colour.
var lineStyles = []struct{ color, dash, marker string }{
	{"#000000", "", "circle"},
	{"#555555", "8 4", "square"},
	{"#000000", "2 3", "triangle"},
	{"#777777", "10 3 2 3", "diamond"},
	{"#333333", "4 4", "circle"},
	{"#888888", "", "square"},
}
