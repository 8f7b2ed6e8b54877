package dynamo

import (
	"context"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Call describes one finished DynamoDB API call to an observer such as a
// metrics collector (see ClientConfig.Observe). The retries of a call are
// part of it.
type Call struct {
	// Operation is the API operation, e.g. "Query" or "TransactWriteItems".
	Operation string
	// CapacityUnits is the capacity DynamoDB reports the call consumed, over
	// all tables and indexes; zero when it reports none.
	CapacityUnits float64
	// Duration is how long the call took, retries included.
	Duration time.Duration
	// Err is the call's error, nil when it succeeded.
	Err error
}

// observeCalls reports every call to observe, with the capacity it
// consumed (countRequests asks DynamoDB for it).
func observeCalls(observe func(Call)) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("ObserveCalls",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				start := time.Now()
				out, md, err := next.HandleInitialize(ctx, in)
				observe(Call{
					Operation:     awsmiddleware.GetOperationName(ctx),
					CapacityUnits: consumedCapacity(out.Result),
					Duration:      time.Since(start),
					Err:           err,
				})
				return out, md, err
			}), middleware.After)
	}
}

// returnCapacity returns a copy of the input of a read or write the Store
// makes that asks for the consumed capacity, so the caller's input stays as
// it was; other inputs, and inputs that ask already, are returned as they
// are.
func returnCapacity(params any) any {
	const total = types.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.BatchGetItemInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.QueryInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.ScanInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.PutItemInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.DeleteItemInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.UpdateItemInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.BatchWriteItemInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	case *dynamodb.TransactWriteItemsInput:
		c := *in
		c.ReturnConsumedCapacity = total
		return &c
	}
	return params
}

// consumedCapacity returns the capacity units a call's result reports, or
// zero for none.
func consumedCapacity(result any) float64 {
	var list []types.ConsumedCapacity
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		list = one(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		list = out.ConsumedCapacity
	case *dynamodb.QueryOutput:
		list = one(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		list = one(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		list = one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		list = one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		list = one(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		list = out.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		list = out.ConsumedCapacity
	}
	units := 0.0
	for _, c := range list {
		if c.CapacityUnits != nil {
			units += *c.CapacityUnits
		}
	}
	return units
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}
