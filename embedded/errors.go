package embedded

import (
	"fmt"
	"net/http"
)

// Errors as DynamoDB returns them: a type (the __type of the JSON body,
// also the SDK's error code), a message, an HTTP status, and for some
// types more members.
//
// Invariant: every error an operation returns to a client is an *apiError;
// anything else is a fault of the engine, answered as an
// InternalServerError whose details stay in the process.

// apiError is an error answered to the client.
type apiError struct {
	code    string // e.g. "ValidationException"
	msg     string
	status  int                  // 0 means 400
	reasons []cancellationReason // TransactionCanceledException
	item    item                 // ConditionalCheckFailedException, when asked for
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

// typePrefix returns the namespace DynamoDB puts before the code in
// __type.
func (e *apiError) typePrefix() string {
	switch e.code {
	case "ValidationException", "SerializationException":
		return "com.amazon.coral.validate#"
	case "UnknownOperationException", "InternalFailure":
		return "com.amazon.coral.service#"
	}
	return "com.amazonaws.dynamodb.v20120810#"
}

func (e *apiError) httpStatus() int {
	if e.status != 0 {
		return e.status
	}
	return http.StatusBadRequest
}

// cancellationReason is why one action of a cancelled transaction failed,
// or "None" for one that did not.
type cancellationReason struct {
	Code    string `json:"Code"`
	Message string `json:"Message,omitempty"`
	Item    item   `json:"Item,omitempty"`
}

// validation returns a ValidationException. The message is formatted only
// when args are given, so a message may hold a % of its own.
func validation(format string, args ...any) error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &apiError{code: "ValidationException", msg: msg}
}

// Errors of other types.

func errResourceNotFound() error {
	return &apiError{code: "ResourceNotFoundException", msg: "Cannot do operations on a non-existent table"}
}

func errResourceInUse(msg string) error {
	return &apiError{code: "ResourceInUseException", msg: msg}
}

const msgConditionFailed = "The conditional request failed"

func errConditionFailed(it item) error {
	return &apiError{code: "ConditionalCheckFailedException", msg: msgConditionFailed, item: it}
}

func errIdempotentMismatch() error {
	return &apiError{code: "IdempotentParameterMismatchException", msg: ""}
}

func errInternal() *apiError {
	return &apiError{code: "InternalServerError", msg: "The server encountered an internal error trying to fulfill the request.", status: http.StatusInternalServerError}
}
