package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The re-render of every publication. The renderer is the fleet's: the
// servers claim it in the default publication's renderer item
// (rerender.go), and the "rerender" worker runs Rerender on the default
// publication's Store. Once that publication's bodies are done, Rerender
// walks the other publications, a step a tick: a step reads one page of
// the publications' directory (walkPage publications, one Query of GSI1
// PUBLICATIONS), sweeps each of them as Rerender sweeps its own (renders
// again every body of another version: the Queries of its posts' and
// pages' lists, and a transaction a body), and records in the renderer
// item where it got to (one UpdateItem, conditional on the renderer and
// the checkpoint as read, so a step that fails or is repeated by another
// server does nothing twice). A pass ends with the directory's last page:
// a pass that rendered nothing marks the walk done, and from then on a
// tick costs the one GetItem of the renderer item again; a pass that
// rendered something is followed by another. A claim of a new renderer
// puts the renderer item anew, without the walk's attributes, so the walk
// starts again with it; a table whose renderer item has none (written by
// an earlier version) walks once.
//
// A walk's first pass begins after the default publication's sweep is
// done, settleAfter or more after the claim: every server renders with
// the claimed renderer by then (at once, in the same tick, after a claim
// of the table's only writer: ClaimRendererAlone). A body a server of an earlier renderer
// writes in another publication after the walk passed it (during a
// rolling deploy that outlasts settleAfter) keeps its renderer until it is
// edited or the next claim: noteRendered marks only the default
// publication's renderer item.

// walkPage is how many publications a step of the walk sweeps.
const walkPage = 10

// walkStep sweeps the next page of the directory's publications with the
// renderer r names (see the top of this file) and records the step in r.
func (s *Store) walkStep(ctx context.Context, r *rendererItem) (Rerendered, error) {
	var out Rerendered
	pass := r.WalkPass
	if pass == "" {
		pass = keys.Time(s.Now())
	}
	page, err := s.ListPublications(ctx, PageArgs{Limit: walkPage, After: r.WalkAfter})
	if err != nil {
		return out, fmt.Errorf("rerender: list the publications: %w", err)
	}
	for _, p := range page.Items {
		if p.ID == s.ks.ID() {
			continue
		}
		in, err := s.In(p.ID)
		if err != nil {
			return out, err
		}
		if err := in.sweepStale(ctx, &out); err != nil {
			return out, err
		}
		out.Publications++
	}
	set := expression.Set(expression.Name("walkPass"), expression.Value(pass))
	switch rendered := r.WalkRendered + int64(out.Rendered); {
	case page.HasNext && len(page.Cursors) > 0:
		set = set.Set(expression.Name("walkAfter"), expression.Value(page.Cursors[len(page.Cursors)-1])).
			Set(expression.Name("walkRendered"), expression.Value(rendered))
	case rendered == 0 && (r.Alone || !keys.ParseTime(pass).Before(keys.ParseTime(r.ClaimedAt).Add(settleAfter))):
		set = expression.Set(expression.Name("walkDone"), expression.Value(true)).
			Remove(expression.Name("walkPass")).Remove(expression.Name("walkAfter")).Remove(expression.Name("walkRendered"))
		out.WalkDone = true
	default:
		// Another pass, from the directory's start.
		set = expression.Set(expression.Name("walkPass"), expression.Value(keys.Time(s.Now()))).
			Remove(expression.Name("walkAfter")).Remove(expression.Name("walkRendered"))
	}
	after := expression.Name("walkAfter").AttributeNotExists()
	if r.WalkAfter != "" {
		after = expression.Name("walkAfter").Equal(expression.Value(r.WalkAfter))
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(set).
		WithCondition(expression.Name("version").Equal(expression.Value(r.Version)).And(after)))
	if err != nil {
		return out, err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(s.ks.Renderer()),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		// Another renderer was claimed meanwhile, or another server took
		// this step: the next tick reads where the walk is.
		out.WalkDone = false
	case err != nil:
		return out, fmt.Errorf("rerender: record the walk: %w", err)
	}
	return out, nil
}
