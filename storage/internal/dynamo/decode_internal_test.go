package dynamo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// answerTransport answers every request with body.
type answerTransport struct{ body []byte }

func (t *answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(bytes.NewReader(t.body)), ContentLength: int64(len(t.body)), Request: r}, nil
}

// decodeBoth reads body as the answer of op with the SDK's protocol and
// with readsProtocol, and returns both outputs (without their metadata)
// and errors.
func decodeBoth(t *testing.T, op string, body []byte) (sdk, ours any, sdkErr, oursErr error) {
	t.Helper()
	tr := &answerTransport{body: body}
	client := func(fast bool) *dynamodb.Client {
		return dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: aws.AnonymousCredentials{},
			BaseEndpoint: aws.String("http://answer.invalid"), HTTPClient: &http.Client{Transport: tr}, RetryMaxAttempts: 1},
			func(o *dynamodb.Options) {
				if fast {
					o.Protocol = readsProtocol{o.Protocol}
				}
			})
	}
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "k"}}
	call := func(c *dynamodb.Client) (any, error) {
		ctx := context.Background()
		switch op {
		case "GetItem":
			out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key})
			if out != nil {
				out.ResultMetadata = sdkNoMetadata
			}
			return out, err
		case "Query":
			out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t")})
			if out != nil {
				out.ResultMetadata = sdkNoMetadata
			}
			return out, err
		default:
			out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("t")})
			if out != nil {
				out.ResultMetadata = sdkNoMetadata
			}
			return out, err
		}
	}
	sdk, sdkErr = call(client(false))
	ours, oursErr = call(client(true))
	return sdk, ours, sdkErr, oursErr
}

var sdkNoMetadata = (&dynamodb.GetItemOutput{}).ResultMetadata

// sameAnswer fails the test unless both protocols read body alike.
func sameAnswer(t *testing.T, op string, body []byte) {
	t.Helper()
	sdk, ours, sdkErr, oursErr := decodeBoth(t, op, body)
	if (sdkErr == nil) != (oursErr == nil) {
		t.Fatalf("%s %s: SDK error %v, ours %v", op, body, sdkErr, oursErr)
	}
	if sdkErr == nil && !reflect.DeepEqual(sdk, ours) {
		t.Fatalf("%s %s:\nSDK  %#v\nours %#v", op, body, sdk, ours)
	}
}

// randomValue returns an attribute value in DynamoDB JSON, nested up to
// depth; binary values are among them, which decodeRead leaves to the SDK.
func randomValue(r *rand.Rand, depth int) map[string]any {
	str := func() string {
		const chars = `abcXYZ019 #_-"\/<>&é€` + "\n\t\x01\u2028"
		rs := []rune(chars)
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteRune(rs[r.IntN(len(rs))])
		}
		if r.IntN(20) == 0 {
			b.WriteString(strings.Repeat("long text ", 150))
		}
		return b.String()
	}
	num := func() string { return fmt.Sprint(r.IntN(2000) - 1000) }
	kinds := 9 // the last two nest
	if depth == 0 {
		kinds = 7
	}
	switch r.IntN(kinds) {
	case 0, 1:
		return map[string]any{"S": str()}
	case 2:
		return map[string]any{"N": num()}
	case 3:
		return map[string]any{"BOOL": r.IntN(2) == 0}
	case 4:
		return map[string]any{"NULL": true}
	case 5:
		set := []string{}
		for range 1 + r.IntN(3) {
			set = append(set, str())
		}
		return map[string]any{"SS": set}
	case 6:
		if r.IntN(400) == 0 {
			return map[string]any{"B": base64.StdEncoding.EncodeToString([]byte(str()))}
		}
		return map[string]any{"NS": []string{num(), num()}}
	case 7:
		return map[string]any{"M": randomItem(r, depth-1)}
	default:
		l := []any{}
		for range r.IntN(4) {
			l = append(l, randomValue(r, depth-1))
		}
		return map[string]any{"L": l}
	}
}

func randomItem(r *rand.Rand, depth int) map[string]any {
	it := map[string]any{}
	for i := range r.IntN(30) {
		name := fmt.Sprintf("a%d", i)
		if r.IntN(8) == 0 {
			name = "é\"\\" + name
		}
		it[name] = randomValue(r, depth)
	}
	return it
}

// randomAnswer returns a GetItem, Query or Scan answer as DynamoDB and the
// embedded engine write it; encoding/json escapes <, > and & as \u003c,
// which the escape path reads.
func randomAnswer(r *rand.Rand, op string) []byte {
	out := map[string]any{}
	capacity := map[string]any{"TableName": "t", "CapacityUnits": []float64{0.5, 1, 12.5, 3e3}[r.IntN(4)]}
	if r.IntN(3) == 0 {
		capacity["Table"] = map[string]any{"CapacityUnits": 1.5, "ReadCapacityUnits": 1.5}
	}
	if r.IntN(4) > 0 {
		out["ConsumedCapacity"] = capacity
	}
	if op == "GetItem" {
		if r.IntN(4) > 0 {
			out["Item"] = randomItem(r, 2)
		}
	} else {
		items := []any{}
		for range r.IntN(25) {
			items = append(items, randomItem(r, 2))
		}
		out["Items"], out["Count"], out["ScannedCount"] = items, len(items), len(items)+r.IntN(3)
		if r.IntN(2) == 0 {
			out["LastEvaluatedKey"] = map[string]any{"PK": map[string]any{"S": "p"}, "SK": map[string]any{"S": "s"}}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return b
}

// TestDecodeReadSameAsSDK reads generated answers with both protocols and
// requires the same outputs; those without binary values must take the
// fast path, or the comparison would prove nothing.
func TestDecodeReadSameAsSDK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for i := range 600 {
		op := []string{"GetItem", "Query", "Scan"}[i%3]
		body := randomAnswer(r, op)
		sameAnswer(t, op, body)
		var out smithy.Deserializable = &dynamodb.QueryOutput{}
		switch op {
		case "GetItem":
			out = &dynamodb.GetItemOutput{}
		case "Scan":
			out = &dynamodb.ScanOutput{}
		}
		ok := decodeRead(body, out)
		if !bytes.Contains(body, []byte(`"B":`)) && !ok {
			t.Fatalf("%s answer without binary values not decoded: %s", op, body)
		}
		if ok {
			fast++
		}
	}
	if fast < 400 {
		t.Fatalf("only %d of 600 answers took the fast path", fast)
	}
}

// decodeSeeds are answers at the edges of what decodeRead takes.
var decodeSeeds = []string{
	`{}`,
	` { "Items" : [ ] , "Count" : 0 , "ScannedCount" : 0 } `,
	`{"Items":[{}],"Count":1,"ScannedCount":1}`,
	`{"Items":[null],"Count":1}`,
	`{"Items":[{"a":null}]}`,
	`{"Items":[{"a":{}}]}`,
	`{"Items":[{"a":{"S":"x","N":"1"}}]}`,
	`{"Items":[{"a":{"X":"x"}}]}`,
	`{"Items":[{"a":{"\u0053":"x"}}]}`,
	`{"Items":[{"a\u00e9\ud83d\ude00":{"S":"\ud800 lone \u0000 \"q\" \/"}}]}`,
	`{"Items":[{"a":{"S":"bad \x escape"}}]}`,
	"{\"Items\":[{\"a\":{\"S\":\"raw \xff\xfe invalid\"}}]}",
	"{\"Items\":[{\"a\":{\"S\":\"escape \\n and \xff invalid\"}}]}",
	`{"Items":[{"a":{"BOOL":true},"b":{"NULL":false},"c":{"L":[]},"d":{"M":{}},"e":{"SS":[]},"f":{"NS":["1","2"]}}]}`,
	`{"Items":[{"a":{"B":"AAE="}}]}`,
	`{"Items":[{"a":{"S":"1"},"a":{"S":"2"}}]}`,
	`{"Items":[],"Items":[{"a":{"S":"2"}}]}`,
	`{"Count":1.0}`,
	`{"Count":-0,"ScannedCount":2147483648}`,
	`{"Count":01}`,
	`{"Count":"1"}`,
	`{"Other":1,"Count":1}`,
	`{"ConsumedCapacity":{"TableName":"t","CapacityUnits":12345678901234567890}}`,
	`{"ConsumedCapacity":{"TableName":"t","CapacityUnits":"Infinity"}}`,
	`{"ConsumedCapacity":{"TableName":"t","CapacityUnits":1e-3,"GlobalSecondaryIndexes":{"g":{"CapacityUnits":1}}}}`,
	`{"ConsumedCapacity":{"CapacityUnits":1,"CapacityUnits":2}}`,
	`{"ConsumedCapacity":null}`,
	`{"LastEvaluatedKey":{"PK":{"S":"p"}},"Count":0}`,
	`{"Item":{"a":{"S":"x"}},"ConsumedCapacity":{"TableName":"t","CapacityUnits":0.5}}`,
	`{"Item":{"a":{"S":"x"}}} trailing`,
	`{"Items":[{"a":{"BOOL":truex}}]}`,
	`{"Items":[{"a":{"S":"x"}},]}`,
	`[1]`,
	`null`,
}

// TestDecodeReadEdges reads answers at the edges of the subset with both
// protocols: what decodeRead refuses, the SDK decides.
func TestDecodeReadEdges(t *testing.T) {
	for _, body := range decodeSeeds {
		for _, op := range []string{"GetItem", "Query", "Scan"} {
			sameAnswer(t, op, []byte(body))
		}
	}
}

// FuzzDecodeRead requires both protocols to read any answer alike.
func FuzzDecodeRead(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(randomAnswer(r, "Query"))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAnswer(t, "Query", body)
		sameAnswer(t, "GetItem", body)
	})
}

// BenchmarkDecodeQuery reads the answer of a Query of 21 items of a
// category page with the SDK's protocol and with readsProtocol.
func BenchmarkDecodeQuery(b *testing.B) {
	var items []any
	for i := range 21 {
		it := map[string]any{"cats": map[string]any{"L": []any{map[string]any{"M": map[string]any{"slug": map[string]any{"S": "go"}, "name": map[string]any{"S": "Go"}}}}},
			"catVer": map[string]any{"M": map[string]any{"go": map[string]any{"N": "0"}}}}
		for _, a := range []string{"createdAt", "type", "id", "GSI1PK", "autoExcerpt", "slug", "authorName", "authorSlug", "SK", "excerpt", "authorId", "publishedAt", "updatedAt", "title", "PK", "GSI1SK", "status"} {
			it[a] = map[string]any{"S": fmt.Sprintf("%s value of item %d, a little text", a, i)}
		}
		for _, a := range []string{"version", "commentCount", "minutes", "words", "authorVer"} {
			it[a] = map[string]any{"N": fmt.Sprint(i)}
		}
		items = append(items, it)
	}
	body, err := json.Marshal(map[string]any{"Items": items, "Count": 21, "ScannedCount": 21,
		"ConsumedCapacity": map[string]any{"TableName": "t", "CapacityUnits": 1.5}})
	if err != nil {
		b.Fatal(err)
	}
	for _, fast := range []bool{false, true} {
		b.Run(map[bool]string{false: "sdk", true: "ours"}[fast], func(b *testing.B) {
			c := dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: aws.AnonymousCredentials{},
				BaseEndpoint: aws.String("http://answer.invalid"), HTTPClient: &http.Client{Transport: &answerTransport{body: body}}},
				func(o *dynamodb.Options) {
					if fast {
						o.Protocol = readsProtocol{o.Protocol}
					}
				})
			b.ReportAllocs()
			for b.Loop() {
				if out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("t")}); err != nil || len(out.Items) != 21 {
					b.Fatal(err)
				}
			}
		})
	}
}
