// Command mcpload posts N MCP initialize requests to a streamable HTTP
// endpoint, each opening a new session, C at a time, and prints how many
// got each HTTP status. scripts/mcp-sessions.sh runs it against
// patchbench mcp --http and reads the server's peak RSS.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpload","version":"1"}}}`

func main() {
	url := flag.String("url", "", "the server's `URL` (http://127.0.0.1:PORT/mcp)")
	n := flag.Int("n", 40000, "initialize requests to post")
	c := flag.Int("c", 8, "requests at a time")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "mcpload: -url is required")
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *c}}
	var mu sync.Mutex
	counts := map[int]int{}
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range *c {
		wg.Go(func() {
			for range work {
				req, _ := http.NewRequest(http.MethodPost, *url, strings.NewReader(initialize))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				status := -1
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				mu.Lock()
				counts[status]++
				mu.Unlock()
			}
		})
	}
	for range *n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	var codes []int
	for k := range counts {
		codes = append(codes, k)
	}
	sort.Ints(codes)
	for _, k := range codes {
		fmt.Printf("status %d: %d\n", k, counts[k])
	}
}
