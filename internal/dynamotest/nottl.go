package dynamotest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// noTTL is a transport to DynamoDB Local that answers UpdateTimeToLive
// itself, as DynamoDB would, and sends every other request on to next:
// the TTL of a test's table stays off (see ClientConfig).
type noTTL struct {
	next http.RoundTripper
}

func (n noTTL) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateTimeToLive") || r.Body == nil {
		return n.next.RoundTrip(r)
	}
	var in struct {
		TimeToLiveSpecification json.RawMessage
	}
	err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in)
	r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("UpdateTimeToLive's body: %w", err)
	}
	body, err := json.Marshal(map[string]json.RawMessage{"TimeToLiveSpecification": in.TimeToLiveSpecification})
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: r,
	}, nil
}
