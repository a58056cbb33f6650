// Package runner is the engine every benchmark runs on: it takes a list of
// cases and a function that does the work of one case, runs the function on
// a pool of workers, and appends one JSON row per finished case to a results
// file. It knows nothing of benchmarks or scoring; those live in the
// function the caller supplies.
//
// # The model-call path
//
// Every benchmark calls its model through a [Model] ([OpenModel]): the
// client of llm.New with its rate limiter, retries and prices, wrapped in
// the response cache (ModelOptions.Cache, by default cache.db in the run
// directory). A case records the latency, tokens and cost of its calls in a
// [ModelCalls] embedded in its result row (latency_ms, tokens, cost,
// cached), whose Usage counts only what was not served from the cache.
// Tool-calling agents run through the same Model: llm.RunAgent with the
// client of [Model.Recording] records every turn, and each turn is cached.
//
// # Selection
//
// [Run] and [Plan] choose the cases of a run in four steps, each
// deterministic:
//
//  1. Shuffle orders the cases by a hash of the seed and the key, so the
//     order depends only on the seed and the set of keys, never on the input
//     order or the Go version.
//  2. Limit keeps the first Limit cases.
//  3. Shard keeps the cases whose key falls in shard i of n (see [Shard]).
//     Sharding comes last so that the n shards of a run, with the same
//     shuffle and limit, hold exactly the cases of the run unsharded.
//  4. Resume skips the cases whose key already has a row in the results
//     file (with RetryFailed, only those whose last row did not fail).
//
// Limit comes before Resume so that an interrupted run resumed with the same
// options finishes the same set of cases.
//
// # The results file
//
// Each finished case adds one line to Options.Out: a JSON object with the
// fields of the caller's [Result] and these fields owned by the runner:
//
//	key         the case key
//	id          the case id
//	failed      true when the function returned an error
//	error       the error text (only when failed)
//	elapsed_ms  wall time of the function call, in milliseconds
//
// A single goroutine writes the file; rows finished together are written with
// one write call and the file is synced before the run counts them as done.
// A process killed at any moment therefore leaves whole lines, except that
// the very last line may be cut short; Resume drops such a line (or
// completes it when only its newline is missing) and the run continues.
//
// # Cancellation
//
// When ctx is cancelled, Run stops starting cases, lets the running ones
// see the cancelled context, records those that finish anyway, and returns
// an error that wraps the context's cause. A case whose function returns an
// error after the run was cancelled is not recorded: it did not finish, and
// a resumed run starts it again. Every case is run at most once per Run
// call, and with Resume a recorded case is never run again.
package runner
