// Command mkbench builds the swe patch-stage benchmark from the shared dev
// corpora: bare repositories with real file histories, a dataset and
// predictions (see swetest.BuildDev). Used by scripts/bench-swe.sh.
//
//	go run ./bench/swe/internal/mkbench -data ../shared/data -out DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/patchbench/patchbench/bench/swe/swetest"
)

func main() {
	data := flag.String("data", "../shared/data", "directory holding diffxyz-dev.jsonl.gz and malformed-dev.jsonl.gz")
	out := flag.String("out", "", "directory to build into (must not exist)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "mkbench: -out is required")
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "mkbench: %s exists\n", *out)
		os.Exit(2)
	}
	b, err := swetest.BuildDev(*out, *data)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mkbench: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%d instances in %d repositories under %s\n", len(b.Instances), len(b.RepoNames), *out)
}
