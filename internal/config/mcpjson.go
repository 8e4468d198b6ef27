package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// jsonServer is one entry of "mcpServers" in .mcp.json (Claude Code, Cursor
// and others) or claude_desktop_config.json.
type jsonServer struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"` // some clients write this instead of type
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Disabled  bool              `json:"disabled"`
	OAuth     *struct {
		ClientID          string   `json:"clientId"`
		ClientSecret      string   `json:"clientSecret"`
		Scopes            []string `json:"scopes"`
		ClientMetadataURL string   `json:"clientMetadataUrl"`
		CallbackPort      int      `json:"callbackPort"`
	} `json:"oauth"`
}

// ParseMCPJSON reads the servers of a .mcp.json or
// claude_desktop_config.json document:
//
//	{"mcpServers": {
//	   "NAME": {"command": "npx", "args": [...], "env": {...}, "cwd": "..."},
//	   "NAME": {"type": "http" | "sse" | "streamable-http", "url": "...", "headers": {...}}}}
//
// file is used in errors and as each Server's File; Line is the line of the
// server's name. ${VAR} references are kept as written. Servers are returned
// in the order of the document. Every problem is an *Error (joined).
func ParseMCPJSON(data []byte, file string) ([]Server, error) {
	if err := checkBounds(file, data, true); err != nil {
		return nil, err
	}
	servers, errs := parseMCPJSON(data, file, false)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return servers, nil
}

// parseMCPJSON parses an mcpServers document. When lenient, entries otter
// cannot run (an unknown type, a missing command or url) do not fail the
// file: they come back with a DisabledReason, since .mcp.json is written for
// other clients too.
func parseMCPJSON(data []byte, file string, lenient bool) ([]Server, errList) {
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, errList{&Error{File: file, Line: lineAt(se.Offset), Msg: "JSON syntax error: " + se.Error(), Hint: "fix the JSON; a trailing comma or a missing quote is the usual cause"}}
		case errors.As(err, &te):
			return nil, errList{&Error{File: file, Line: lineAt(te.Offset), Msg: fmt.Sprintf("%q must be an object of servers", "mcpServers"),
				Hint: `write {"mcpServers": {"NAME": {"command": "..."}}}`}}
		}
		return nil, errList{&Error{File: file, Msg: err.Error()}}
	}
	if doc.MCPServers == nil {
		return nil, errList{&Error{File: file, Line: 1, Msg: `no "mcpServers" object`, Hint: `write {"mcpServers": {"NAME": {"command": "..."}}}`}}
	}
	lines := jsonServerLines(data)
	names := make([]string, 0, len(doc.MCPServers))
	for name := range doc.MCPServers {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return lines[a] - lines[b] })

	var errs errList
	var servers []Server
	for _, name := range names {
		line := lines[name]
		if checkServerName(&errs, file, line, name) {
			continue
		}
		var js jsonServer
		if err := json.Unmarshal(doc.MCPServers[name], &js); err != nil {
			var te *json.UnmarshalTypeError
			msg := err.Error()
			switch {
			case errors.As(err, &te) && te.Field == "":
				msg = fmt.Sprintf("must be an object, not a JSON %s", te.Value)
			case errors.As(err, &te):
				msg = fmt.Sprintf("%s must be %s, not a JSON %s", te.Field, jsonTypeName(te.Type.String()), te.Value)
			}
			errs.add(file, line, "see the .mcp.json examples in config.example.toml", "server %q: %s", name, msg)
			continue
		}
		s := Server{
			Name: name, Command: js.Command, Args: js.Args, Env: js.Env, Cwd: js.Cwd,
			URL: js.URL, Headers: js.Headers, File: file, Line: line,
		}
		if js.Disabled {
			no := false
			s.Enabled = &no
		}
		if js.OAuth != nil {
			s.OAuth = &OAuth{ClientID: js.OAuth.ClientID, ClientSecret: js.OAuth.ClientSecret, Scopes: js.OAuth.Scopes,
				ClientMetadataURL: js.OAuth.ClientMetadataURL, CallbackPort: js.OAuth.CallbackPort}
		}
		problem, hint := "", ""
		typ := js.Type
		if typ == "" {
			typ = js.Transport
		}
		switch strings.ToLower(typ) {
		case "":
			switch {
			case s.Command != "" && s.URL != "":
				problem, hint = "has both command and url", `keep only one: "command" runs a local server, "url" connects to a remote one`
			case s.Command != "":
				s.Transport = TransportStdio
			case s.URL != "":
				s.Transport = TransportHTTP
			default:
				problem, hint = "has neither command nor url", `add "command" for a local server or "url" for a remote one`
			}
		case "stdio":
			s.Transport = TransportStdio
		case "http", "streamable-http", "streamable_http", "streamablehttp":
			s.Transport = TransportHTTP
		case "sse":
			s.Transport = TransportSSE
		default:
			problem, hint = fmt.Sprintf("has type %q, which otter does not support", typ), `otter runs "stdio", "http" (streamable HTTP) and "sse" servers`
		}
		switch {
		case problem != "":
		case s.Transport == TransportStdio && s.Command == "":
			problem, hint = "is a stdio server without a command", `add "command"`
		case s.Transport != TransportStdio && s.URL == "":
			problem, hint = "is a remote server without a url", `add "url"`
		}
		if problem != "" {
			if !lenient {
				errs.add(file, line, hint, "server %q %s", name, problem)
				continue
			}
			s.DisabledReason = fmt.Sprintf("not started: %s:%d: server %q %s (%s)", file, line, name, problem, hint)
		}
		servers = append(servers, s)
	}
	return servers, errs
}

// jsonServerLines returns the line of each key of the "mcpServers" object.
func jsonServerLines(data []byte) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	jsonObjectKeys(dec, func(key string) bool {
		if key != "mcpServers" {
			return false
		}
		jsonObjectKeys(dec, func(name string) bool {
			lines[name] = 1 + bytes.Count(data[:min(int(dec.InputOffset()), len(data))], []byte("\n"))
			return false
		})
		return true
	})
	return lines
}

// jsonObjectKeys reads the object that comes next from dec, calling fn
// after each key; when fn returns false the key's value is skipped, else fn
// has read it.
func jsonObjectKeys(dec *json.Decoder, fn func(key string) bool) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := tok.(string)
		if !fn(key) {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return
			}
		}
	}
	dec.Token() // the closing }
}

// jsonTypeName names a Go type of jsonServer the way JSON users think of it.
func jsonTypeName(t string) string {
	switch t {
	case "string":
		return "a string"
	case "[]string":
		return "an array of strings"
	case "map[string]string":
		return "an object of strings"
	case "int":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "an object"
}
