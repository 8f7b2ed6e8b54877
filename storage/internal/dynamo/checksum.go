package dynamo

import (
	"context"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strconv"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// DynamoDB signs each answer's body with a CRC32 in the x-amz-crc32
// header, which the client checks. The SDK's own check
// (dynamodb.Options.DisableValidateResponseChecksum) checks against 0
// when the header is absent, as it is from DynamoDB Local's error
// answers (a failed condition, a cancelled transaction): every such
// answer logged "response did not match expected checksum". The client
// uses this check instead, the SDK's without that mistake: an answer with
// the header must match it, one without is not checked.

// validateCRC32 checks the body of each answer that carries x-amz-crc32
// against it; a mismatch fails the call when the body is closed.
func validateCRC32(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("ValidateCRC32",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			if err != nil {
				return out, md, err
			}
			resp, ok := out.RawResponse.(*smithyhttp.Response)
			if !ok {
				return out, md, err
			}
			v := resp.Header.Get("X-Amz-Crc32")
			if v == "" {
				return out, md, nil
			}
			want, perr := strconv.ParseUint(v, 10, 32)
			if perr != nil {
				return out, md, fmt.Errorf("x-amz-crc32 %q: %w", v, perr)
			}
			h := crc32.NewIEEE()
			resp.Body = &crc32Body{Reader: io.TeeReader(resp.Body, h), closer: resp.Body, want: uint32(want), hash: h}
			return out, md, nil
		}), middleware.After)
}

// crc32Body hashes what is read of an answer's body and checks it when
// closed.
type crc32Body struct {
	io.Reader
	closer io.Closer
	want   uint32
	hash   hash.Hash32
}

func (b *crc32Body) Close() error {
	if got := b.hash.Sum32(); got != b.want {
		b.closer.Close()
		return fmt.Errorf("response did not match its x-amz-crc32: %d, computed %d", b.want, got)
	}
	return b.closer.Close()
}
