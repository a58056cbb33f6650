package loc

import (
	"context"

	"github.com/patchbench/patchbench/codesearch"
	"github.com/patchbench/patchbench/repo"
	"github.com/patchbench/patchbench/runner"
)

// Indexed is the indexed mode's searcher: the BM25 index of package
// codesearch, its ranking cut to an answer.
type Indexed struct {
	*codesearch.Indexed
	// TopFiles, TopFunctions and TopRanges bound the answer: ranked
	// files and functions, and the chunks whose lines make the ranges.
	TopFiles, TopFunctions, TopRanges int
}

// NewIndexed returns an indexed searcher caching its indexes under dir.
func NewIndexed(dir string) *Indexed {
	return &Indexed{Indexed: codesearch.NewIndexed(dir), TopFiles: 10, TopFunctions: 10, TopRanges: 5}
}

// Search implements [Searcher]: the best chunks for the case's query
// give the ranked files and functions, and the top chunks' lines the
// ranges.
func (s *Indexed) Search(ctx context.Context, c Case, rp *repo.Repo, _ *runner.ModelCalls) (Answer, error) {
	r, err := s.Rank(ctx, rp, c.BaseCommit, c.Query)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Found: s.Found(r)}, nil
}

// Found cuts a ranking to the answer: the first TopFiles files and
// TopFunctions functions, and the lines of the first TopRanges functions.
func (s *Indexed) Found(r codesearch.Ranking) Found {
	f := Found{Files: r.Files[:min(len(r.Files), s.TopFiles)], Ranges: map[string][]Range{}}
	for i, ch := range r.Functions {
		if i >= s.TopFunctions {
			break
		}
		f.Functions = append(f.Functions, ch.Path+":"+ch.Name)
		if i < s.TopRanges {
			f.Ranges[ch.Path] = append(f.Ranges[ch.Path], Range{ch.Start, ch.End})
		}
	}
	return f
}
