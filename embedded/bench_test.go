package embedded

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// BenchmarkDurablePut measures a PutItem that is synced to the data file
// before it is answered, one writer at a time: the floor of every write.
func BenchmarkDurablePut(b *testing.B) {
	e, err := Open(Options{Path: filepath.Join(b.TempDir(), "blog.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	db := engineClient(e)
	ctx := context.Background()
	blogTable(&testing.T{}, db, "blog")
	pad := avS(strings.Repeat("x", 1000))
	for i := range 5000 {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS(fmt.Sprint("p", i%500)), "SK", avS(fmt.Sprint(i)), "pad", pad)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS(fmt.Sprint("p", i%500)), "SK", avS(fmt.Sprint("n", i)), "pad", pad)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutInMemory is the same in memory, without syncs.
func BenchmarkPutInMemory(b *testing.B) {
	e, err := OpenMemory()
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	db := engineClient(e)
	ctx := context.Background()
	blogTable(&testing.T{}, db, "blog")
	pad := avS(strings.Repeat("x", 1000))
	b.ResetTimer()
	for i := range b.N {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS(fmt.Sprint("p", i%500)), "SK", avS(fmt.Sprint("n", i)), "pad", pad)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutWithStream is BenchmarkPutInMemory on a table with a
// NEW_AND_OLD_IMAGES stream: what a stream record adds to a write.
func BenchmarkPutWithStream(b *testing.B) {
	e, err := OpenMemory()
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	db := engineClient(e)
	ctx := context.Background()
	streamTable(&testing.T{}, db, "blog", "NEW_AND_OLD_IMAGES")
	pad := avS(strings.Repeat("x", 1000))
	b.ResetTimer()
	for i := range b.N {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS(fmt.Sprint("p", i%500)), "SK", avS(fmt.Sprint("n", i)), "pad", pad)}); err != nil {
			b.Fatal(err)
		}
	}
}
