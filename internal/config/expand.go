package config

import (
	"fmt"
	"strings"
)

// expandVars replaces ${VAR} and ${VAR:-default} in s:
//
//   - ${VAR} is the value of VAR (empty if VAR is set but empty); an unset
//     VAR is an error.
//   - ${VAR:-default} is the value of VAR, or default if VAR is unset or
//     empty. default is taken literally, except that the references in
//     it are expanded the same way (${A:-${B:-b}}): it ends at the "}"
//     that closes its "${".
//   - "$$" and "$" not followed by "{" are left exactly as written (so
//     "$$" stays "$$", "$HOME" stays "$HOME" and "$${X}" stays "$${X}").
//
// VAR is a letter or underscore followed by letters, digits or underscores.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "$$") {
			b.WriteString("$$")
			i += 2
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(c)
			i++
			continue
		}
		end := closingBrace(s[i:])
		if end < 0 {
			return "", &varError{ref: s[i:], msg: "has no closing }"}
		}
		ref := s[i : i+end+1]
		inner := ref[2 : len(ref)-1]
		name, def, hasDef := strings.Cut(inner, ":-")
		if !validVarName(name) {
			return "", &varError{ref: ref, msg: "is not a valid variable reference"}
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			var err error
			if v, err = expandVars(def, lookup); err != nil {
				return "", err
			}
		case !ok:
			return "", &varError{name: name, ref: ref}
		}
		b.WriteString(v)
		i += end + 1
	}
	return b.String(), nil
}

// closingBrace returns the index in s (which starts with "${") of the "}"
// that closes it, counting the "${" nested in a default; -1 if none does.
func closingBrace(s string) int {
	depth := 0
	for j := 0; j < len(s); j++ {
		switch {
		case strings.HasPrefix(s[j:], "${"):
			depth++
			j++
		case s[j] == '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// varError is a failed ${...} expansion: a missing variable (name set) or
// a malformed reference.
type varError struct {
	name string
	ref  string
	msg  string
}

func (e *varError) Error() string {
	if e.name != "" {
		return fmt.Sprintf("environment variable %s is not set", e.name)
	}
	return fmt.Sprintf("%q %s", e.ref, e.msg)
}

// hint says what to do; disable, if not empty, is how the file in question
// turns the server off (e.g. `enabled = false`), offered as an option.
func (e *varError) hint(disable string) string {
	if e.name == "" {
		return "write ${NAME} or ${NAME:-default}; a lone $ or $$ is kept as is"
	}
	h := fmt.Sprintf("set %s in the environment or write ${%s:-default}", e.name, e.name)
	if disable != "" {
		h += ", or set " + disable + " on the server"
	}
	return h
}
