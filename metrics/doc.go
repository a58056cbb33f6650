// Package metrics holds the scores patchbench reports: exact match and
// intersection over union of texts with blank lines stripped, set precision,
// recall and F1, the unbiased pass@k estimator, the answer extraction
// that decides which part of a model response is scored, and the code
// localization metrics (relace-mcp's file/line/function scores and quality
// scores, LocAgent's Acc@k, Recall@k, P@k, NDCG@k and MAP@k; loc.go).
//
// Every function is pure and depends on the standard library only. Where a
// ratio has an empty denominator the convention is stated on the function;
// the conventions are chosen so that "nothing expected, nothing produced"
// scores 1 and "something expected, nothing produced" (or the reverse)
// scores 0, except where a metric carries a seed tool's name: then the
// tool's convention holds (relace-mcp's line coverage and function hit rate
// are 0 with nothing expected).
package metrics
