//go:build nosdk

package llm

import (
	"errors"
	"fmt"
)

// ErrNoSDK is wrapped by the error of an openai/ or anthropic/ model in a
// build with -tags nosdk, which leaves the providers' SDKs out (they are
// most of patchbench-full's compile time) for offline runs: reference and
// replay models.
var ErrNoSDK = errors.New("built with -tags nosdk: no provider SDK (build without the tag)")

func newOpenAI(model, _ string, _ resolved) (Client, error) {
	return nil, fmt.Errorf("llm: model %s: %w", model, ErrNoSDK)
}

func newAnthropic(model, _ string, _ resolved) (Client, error) {
	return nil, fmt.Errorf("llm: model %s: %w", model, ErrNoSDK)
}

func newOpenAIEmbedder(model, _ string, _ resolved) (rawEmbedder, error) {
	return nil, fmt.Errorf("llm: embedding model %s: %w", model, ErrNoSDK)
}
