package gqlhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
)

// answerKey returns the key of the answer r asks for, whether r registers
// a persisted query (its document and its hash: it must reach the
// executor, which keeps the hash), and false when r is
// not one the answer cache serves (a body that is not JSON, a batch, a
// document that does not lex): the operation's name, the document
// normalized (its tokens, without whitespace, commas and comments; a
// persisted query's hash when only the hash is sent), the variables in
// canonical JSON (keys sorted), and the Accept header, which chooses the
// answer's media type. A POST's body is read and put back for the
// transport.
func answerKey(r *http.Request) (key string, registers, ok bool) {
	var p struct {
		Query         string          `json:"query"`
		OperationName string          `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    struct {
			PersistedQuery struct {
				Hash string `json:"sha256Hash"`
			} `json:"persistedQuery"`
		} `json:"extensions"`
	}
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		p.Query, p.OperationName = q.Get("query"), q.Get("operationName")
		p.Variables = json.RawMessage(q.Get("variables"))
		if ext := q.Get("extensions"); ext != "" && json.Unmarshal([]byte(ext), &p.Extensions) != nil {
			return "", false, false
		}
	case http.MethodPost:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			return "", false, false
		}
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil || json.Unmarshal(body, &p) != nil {
			return "", false, false
		}
	default:
		return "", false, false
	}
	var doc string
	switch {
	case p.Query != "":
		var ok bool
		if doc, ok = normalizeDocument(p.Query); !ok {
			return "", false, false
		}
	case p.Extensions.PersistedQuery.Hash != "":
		doc = "#" + p.Extensions.PersistedQuery.Hash
	default:
		return "", false, false
	}
	vars := "{}"
	if len(bytes.TrimSpace(p.Variables)) > 0 && string(bytes.TrimSpace(p.Variables)) != "null" {
		var v any
		d := json.NewDecoder(bytes.NewReader(p.Variables))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return "", false, false
		}
		if _, ok := v.(map[string]any); !ok {
			return "", false, false
		}
		b, err := json.Marshal(v) // maps marshal with their keys sorted
		if err != nil {
			return "", false, false
		}
		vars = string(b)
	}
	registers = p.Query != "" && p.Extensions.PersistedQuery.Hash != ""
	return strings.Join([]string{p.OperationName, r.Header.Get("Accept"), doc, vars}, "\x00"), registers, true
}

// normalizeDocument returns the tokens of the document query, one space
// apart, strings quoted again: two documents that differ only in
// whitespace, commas, comments or how a string is written give the same
// text. It fails where the lexer does; the transport then reports it.
func normalizeDocument(query string) (string, bool) {
	lx := lexer.New(&ast.Source{Input: query})
	var b strings.Builder
	b.Grow(len(query))
	for {
		tok, err := lx.ReadToken()
		if err != nil {
			return "", false
		}
		switch tok.Kind {
		case lexer.EOF:
			return b.String(), true
		case lexer.Comment:
			continue
		case lexer.String, lexer.BlockString:
			b.WriteString(strconv.Quote(tok.Value))
		case lexer.Name, lexer.Int, lexer.Float:
			b.WriteString(tok.Value)
		default: // punctuation, which has no value
			b.WriteString(tok.Kind.String())
		}
		b.WriteByte(' ')
	}
}
