package llm

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// ParseDotEnv reads KEY=VALUE lines in the .env format: blank lines and
// lines starting with # are skipped, an "export " prefix is allowed, values
// may be single-quoted (taken literally) or double-quoted (with \n, \t, \"
// and \\ escapes), and an unquoted value ends at " #". Errors name the line
// and never the value, which may be a secret.
func ParseDotEnv(r io.Reader) (map[string]string, error) {
	env := make(map[string]string)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, raw, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok {
			return nil, fmt.Errorf("dotenv: line %d: missing =", n)
		}
		if !validEnvKey(key) {
			return nil, fmt.Errorf("dotenv: line %d: invalid name %q", n, key)
		}
		val, err := dotEnvValue(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("dotenv: line %d: %s: %w", n, key, err)
		}
		env[key] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dotenv: %w", err)
	}
	return env, nil
}

func validEnvKey(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		switch {
		case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '.'):
		default:
			return false
		}
	}
	return true
}

func dotEnvValue(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	switch s[0] {
	case '\'':
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("unterminated single quote")
		}
		if rest := strings.TrimSpace(s[end+2:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", fmt.Errorf("text after closing quote")
		}
		return s[1 : end+1], nil
	case '"':
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '"':
				if rest := strings.TrimSpace(s[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", fmt.Errorf("text after closing quote")
				}
				return b.String(), nil
			case c == '\\' && i+1 < len(s):
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(s[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf("unterminated double quote")
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s), nil
}

// LoadDotEnv reads the .env file at path and sets every variable it names
// that is not already set in the environment; set variables win. A missing
// file is reported with an error that wraps fs.ErrNotExist.
func LoadDotEnv(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dotenv: %w", err)
	}
	defer f.Close()
	env, err := ParseDotEnv(f)
	if err != nil {
		return fmt.Errorf("%w (in %s)", err, path)
	}
	for k, v := range env {
		if _, set := os.LookupEnv(k); set {
			continue
		}
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("dotenv: %s: setting %s: %w", path, k, err)
		}
	}
	return nil
}
