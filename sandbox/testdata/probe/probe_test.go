// Package probe tries what a sandboxed test can reach; see test_probe.py,
// whose output lines it repeats.
package probe

import (
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

func targets(name string) []string {
	var out []string
	for _, t := range strings.Split(os.Getenv(name), "\n") {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

func report(op, target string, fn func(string) (string, error)) {
	if detail, err := fn(target); err != nil {
		fmt.Printf("probe %s %s: error: %v\n", op, target, err)
	} else {
		fmt.Printf("probe %s %s: ok: %s\n", op, target, detail)
	}
}

func TestProbe(t *testing.T) {
	for _, p := range targets("PROBE_LIST") {
		report("list", p, func(p string) (string, error) {
			entries, err := os.ReadDir(p)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			sort.Strings(names)
			return strings.Join(names, " "), err
		})
	}
	for _, p := range targets("PROBE_READ") {
		report("read", p, func(p string) (string, error) {
			data, err := os.ReadFile(p)
			return fmt.Sprintf("%d bytes", len(data)), err
		})
	}
	for _, p := range targets("PROBE_WRITE") {
		report("write", p, func(p string) (string, error) {
			return "written", os.WriteFile(p, []byte("written by the probe\n"), 0o666)
		})
	}
	for _, a := range targets("PROBE_CONNECT") {
		report("connect", a, func(a string) (string, error) {
			c, err := net.DialTimeout("tcp", a, 5*time.Second)
			if err != nil {
				return "", err
			}
			c.Close()
			return "connected", nil
		})
	}
	for _, name := range targets("PROBE_ENV") {
		state := "unset"
		if _, ok := os.LookupEnv(name); ok {
			state = "set"
		}
		fmt.Printf("probe env %s: %s\n", name, state)
	}
	fmt.Printf("probe home %s: ok\n", os.Getenv("HOME"))
}
