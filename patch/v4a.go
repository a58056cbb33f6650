package patch

import (
	"errors"
	"strings"
)

// ParseV4A parses v4a blocks. (Being written.)
func ParseV4A(text string) (*Patch, error) {
	return nil, errors.New("parse v4a: not implemented yet")
}

func printV4A(b *strings.Builder, p *Patch) error {
	return errors.New("print v4a: not implemented yet")
}
