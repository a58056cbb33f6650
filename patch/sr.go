package patch

import (
	"errors"
	"strings"
)

// ParseSearchReplace parses search-replace blocks. (Being written.)
func ParseSearchReplace(text string) (*Patch, error) {
	return nil, errors.New("parse search-replace: not implemented yet")
}

func printSearchReplace(b *strings.Builder, p *Patch) error {
	return errors.New("print search-replace: not implemented yet")
}
