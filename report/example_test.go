package report_test

import (
	"log"
	"os"

	"github.com/patchbench/patchbench/report"
)

func ExampleAggregate() {
	rows := []map[string]any{
		{"task": "apply", "format": "udiff", "em": true, "iou": 1.0},
		{"task": "apply", "format": "udiff", "em": false, "iou": 0.5},
		{"task": "diffgen", "format": "udiff", "em": false, "iou": 0.25},
	}
	r, err := report.Aggregate(rows, report.Spec{
		Dims:        []string{"task", "format"},
		Metrics:     []string{"em", "iou"},
		Definitions: map[string]string{"em": "stripped exact match"},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.WriteText(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// task     format  n     em    iou
	// -------  ------  -  -----  -----
	// apply    udiff   2  50.0%  0.750
	// diffgen  udiff   1   0.0%  0.250
	// all              3  33.3%  0.583
}
