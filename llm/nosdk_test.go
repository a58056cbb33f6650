//go:build nosdk

package llm

import (
	"context"
	"errors"
	"testing"
)

// TestNoSDK: a build without the SDKs refuses their models, naming why,
// and keeps the offline ones.
func TestNoSDK(t *testing.T) {
	for _, m := range []string{"openai/gpt-4.1", "anthropic/claude-sonnet-4-5"} {
		if _, err := New(context.Background(), m, Options{APIKey: "k"}); !errors.Is(err, ErrNoSDK) {
			t.Errorf("New(%s) = %v, want ErrNoSDK", m, err)
		}
	}
}
