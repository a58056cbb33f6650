package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrMaxTurns is wrapped by the error of [RunAgent] when the model still
// called tools after the last turn allowed.
var ErrMaxTurns = errors.New("model still calling tools after the last turn")

// ToolOutput is what running one tool call gives back.
type ToolOutput struct {
	// Content is sent to the model as the call's result.
	Content string
	// IsError tells the model the call failed (bad arguments, a path
	// outside the repository, ...); the conversation goes on.
	IsError bool
	// Stop ends the conversation once this turn's calls have run, without
	// asking the model again: the call was the final answer (for example
	// a report_back tool).
	Stop bool
}

// ToolFunc runs one tool call. A failed call that the model should hear
// about is a ToolOutput with IsError; a returned error aborts the whole
// conversation.
type ToolFunc func(ctx context.Context, call ToolCall) (ToolOutput, error)

// Agent is the outcome of [RunAgent].
type Agent struct {
	// Messages is the whole conversation: the request's messages, then
	// each turn's assistant message and tool results.
	Messages []Message
	// Text is the text of the last answer.
	Text string
	// Turns is the number of answers received; CachedTurns of those came
	// from the response cache.
	Turns, CachedTurns int
	// ToolCalls is the number of tool calls run.
	ToolCalls int
	// InputTokens, OutputTokens and Cost total every answer's usage,
	// cached answers included (their original call's).
	InputTokens, OutputTokens int
	Cost                      float64
	// Latency totals the answers' latencies.
	Latency time.Duration
	// Stopped reports that a tool call ended the conversation (see
	// ToolOutput.Stop) rather than an answer without tool calls.
	Stopped bool
}

// RunAgent runs a tool-calling conversation: it sends req, runs the tool
// calls of the answer with run, sends the conversation again with their
// results, and so on, until the model answers without tool calls, a tool
// asks to stop, or maxTurns answers (0 means no bound) have been received
// and the last one still calls tools; the error then wraps [ErrMaxTurns].
// Calls of one answer run one after another, in order. Tool calls without
// an ID get "call_TURN_INDEX", so the conversation (and with it the cache
// key of every turn) is the same on each run.
//
// The Agent returned holds the conversation so far also when RunAgent
// fails. Wrap c with the response cache (llm/cache) and a rerun that makes
// the same tool calls sends no request.
func RunAgent(ctx context.Context, c Client, req Request, run ToolFunc, maxTurns int) (*Agent, error) {
	a := &Agent{Messages: slices.Clone(req.Messages)}
	for {
		if maxTurns > 0 && a.Turns >= maxTurns {
			return a, fmt.Errorf("agent: %w (%d turns)", ErrMaxTurns, maxTurns)
		}
		r := req
		// A copy per request: clients and caches may keep the slice.
		r.Messages = slices.Clone(a.Messages)
		resp, err := c.Complete(ctx, r)
		if err != nil {
			return a, fmt.Errorf("agent: turn %d: %w", a.Turns+1, err)
		}
		a.Turns++
		if resp.Cached {
			a.CachedTurns++
		}
		a.InputTokens += resp.InputTokens
		a.OutputTokens += resp.OutputTokens
		a.Cost += resp.Cost
		a.Latency += resp.Latency
		a.Text = resp.Text
		resp.ToolCalls = slices.Clone(resp.ToolCalls)
		for i := range resp.ToolCalls {
			if resp.ToolCalls[i].ID == "" {
				resp.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", a.Turns, i+1)
			}
		}
		a.Messages = append(a.Messages, resp.Message())
		if len(resp.ToolCalls) == 0 {
			return a, nil
		}
		results := make([]ToolResult, 0, len(resp.ToolCalls))
		stop := false
		for _, call := range resp.ToolCalls {
			out, err := run(ctx, call)
			if err != nil {
				return a, fmt.Errorf("agent: turn %d: tool %s (call %s): %w", a.Turns, call.Name, call.ID, err)
			}
			a.ToolCalls++
			results = append(results, ToolResult{CallID: call.ID, Content: out.Content, IsError: out.IsError})
			stop = stop || out.Stop
		}
		a.Messages = append(a.Messages, Message{Role: "tool", ToolResults: results})
		if stop {
			a.Stopped = true
			return a, nil
		}
	}
}
