package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/feedstore"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Store is the blog's single-table DynamoDB store. It is safe for
// concurrent use; it holds no state between calls but the client and
// hints of what it last saw of a few items, which writes use only under
// conditions that check them (hints.go).
type Store struct {
	// db is the table, confined to the publication's key space (ks): the
	// tenant guard refuses a request for any other publication's keys.
	db *dynamo.Table
	// ks is the key space of the Store's publication.
	ks      keys.Space
	table   string
	now     func() time.Time
	cursors cursorKeys
	// render is how bodies are rendered (WithHeadingIDPrefix).
	render markdown.Options
	// images shows library images in bodies (WithLibraryImages); nil:
	// as their alt text.
	images *libraryImages
	// claimed is what the store last read of the table's renderer
	// (rerender.go).
	claimed *claimed
	// hints remember what comments' transactions depend on (hints.go).
	hints *hints
	// feed is the change feed's own items (package feedstore).
	feed *feedstore.Store
	// privateHosts lets links name hosts that are not public (links.go).
	privateHosts bool
	// stream makes CreateTable give the table its stream (WithStream).
	stream bool
	// siteCache is the server's copy of the site settings (site.go).
	siteCache *siteCache
	// staff holds the roles of the publication's accounts (staff.go).
	staff *staffCache
	// countLag is how long Check lets summaries' comment counts lag
	// (WithCountLag, checkcounts.go); lagWait waits it (tests replace it).
	countLag time.Duration
	lagWait  func(ctx context.Context, d time.Duration) error
	// migrationStop stops the layout 5 step of Migrate after so many
	// pages of so many items (tests; migrations.Env.StopAfter).
	migrationStop struct{ pages, size int }
	// quota bounds the posts and webhooks of a publication that has no
	// limits of its own (WithPublicationQuota, quotas.go).
	quota PublicationQuota
	// postsGate lets one of the server's post writes at a time write the
	// publication's posts' counter (quotas.go).
	postsGate counterGate
	// pubs holds hints, siteCache and claimed of each publication a Store
	// was made In (publication_stores.go), shared by every copy.
	pubs *pubStates
}

// Option configures a Store.
type Option func(*Store)

// WithClock makes the Store read the time from now: it decides which
// scheduled posts are visible and stamps every write.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// WithHeadingIDPrefix makes the Store start the ids of the headings of the
// bodies it renders, and the anchors of their tables of contents, with
// prefix (markdown.Options.HeadingIDPrefix); without it they start with
// markdown.DefaultHeadingIDPrefix. A body is rendered when it is written;
// the posts written before are rendered again in the background
// (rerender.go).
func WithHeadingIDPrefix(prefix string) Option {
	return func(s *Store) { s.render.HeadingIDPrefix = prefix }
}

// WithSiteURL makes the Store render links to the public site url as the
// blog's own, without rel="nofollow noreferrer"
// (markdown.Options.SiteURL).
func WithSiteURL(url string) Option {
	return func(s *Store) { s.render.SiteURL = url }
}

// WithHighlight makes the Store highlight fenced code when it renders
// bodies (markdown.Options.Highlight).
func WithHighlight(on bool) Option {
	return func(s *Store) { s.render.Highlight = on }
}

// WithStream makes CreateTable give the table a stream of StreamView,
// the change feed's source, and turn it on for a table made without one.
// The server's Store has it. Without it the table is left without a stream:
// tests do so, since DynamoDB Local writes several times slower on a
// table with one.
func WithStream() Option {
	return func(s *Store) { s.stream = true }
}

// WithPublication makes the Store the store of the publication id: its
// items live under the publication's prefix (keys.Space). Without it the
// Store is DefaultPublication's. It panics on an id that is empty or
// holds a "#" (configuration checks ids before).
func WithPublication(id string) Option {
	return func(s *Store) { s.ks = keys.MustIn(id) }
}

// DefaultPublication is the id of the publication a Store serves when it is
// made without WithPublication: the one a new table starts with, and the
// one the layout 5 migration moves an older table's items into.
const DefaultPublication = "default"

// New returns a Store on table through db, for the publication
// WithPublication names (DefaultPublication without).
func New(db *dynamodb.Client, table string, opts ...Option) *Store {
	s := &Store{table: table, now: time.Now,
		ks:     keys.MustIn(DefaultPublication),
		render: markdown.Options{HeadingIDPrefix: markdown.DefaultHeadingIDPrefix}}
	for _, o := range opts {
		o(s)
	}
	s.pubs = &pubStates{states: map[string]*pubState{}}
	st := s.pubs.state(s.ks.ID())
	s.hints, s.siteCache, s.claimed, s.staff, s.postsGate = st.hints, st.siteCache, st.claimed, st.staff, st.posts
	s.db = dynamo.New(db, table, st.hints).Confine(s.ks.Prefix(), keys.Global)
	if s.cursors.enc == nil {
		s.cursors = randomCursorKeys()
	}
	s.feed = feedstore.New(s.db, s.now)
	return s
}

// At returns a Store on the same table and client that takes the time from
// now: what it writes is stamped with that time. Imports and the demo blog
// use it to backdate posts and comments.
func (s *Store) At(now func() time.Time) *Store {
	c := *s
	c.now = now
	c.feed = s.feed.At(now)
	return &c
}

// Feed returns the change feed's own items in the Store's table (leases,
// heartbeats, the event log), on the Store's clock.
func (s *Store) Feed() *feedstore.Store { return s.feed }

// Now returns the Store's current time, truncated to the millisecond the
// table stores.
func (s *Store) Now() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// CreateTable creates the table and GSI1 with on-demand billing and, made
// WithStream, a stream of StreamView. An existing table is left as it is,
// but for its stream, which WithStream turns on when it has none. On
// DynamoDB it waits until the table is ACTIVE.
func (s *Store) CreateTable(ctx context.Context) error {
	str := types.ScalarAttributeTypeS
	var stream *types.StreamSpecification
	if s.stream {
		stream = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: StreamView}
	}
	_, err := s.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(s.table),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(keys.AttrPK), AttributeType: str},
			{AttributeName: aws.String(keys.AttrSK), AttributeType: str},
			{AttributeName: aws.String(keys.AttrGSI1PK), AttributeType: str},
			{AttributeName: aws.String(keys.AttrGSI1SK), AttributeType: str},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(keys.AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(keys.AttrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(keys.IndexGSI1),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(keys.AttrGSI1PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(keys.AttrGSI1SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		StreamSpecification: stream,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %q: %w", s.table, err)
	}
	if err := s.waitActive(ctx); err != nil {
		return err
	}
	if s.stream {
		if err := s.enableStream(ctx); err != nil {
			return err
		}
	}
	return s.enableTTL(ctx)
}

// StreamView is what the table's stream records carry: both images of
// every changed item, from which the change feed's events are made.
const StreamView = types.StreamViewTypeNewAndOldImages

// enableStream turns on the table's stream when a table made by an
// earlier version has none. It fails when the table streams another view,
// which only its owner can change (off, then on again).
func (s *Store) enableStream(ctx context.Context) error {
	out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	if err != nil {
		return fmt.Errorf("describe table %q: %w", s.table, err)
	}
	switch spec := out.Table.StreamSpecification; {
	case spec != nil && aws.ToBool(spec.StreamEnabled) && spec.StreamViewType == StreamView:
		return nil
	case spec != nil && aws.ToBool(spec.StreamEnabled):
		return fmt.Errorf("table %q streams %s; the change feed needs %s", s.table, spec.StreamViewType, StreamView)
	}
	_, err = s.db.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:           aws.String(s.table),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: StreamView},
	})
	if err != nil {
		return fmt.Errorf("enable the stream of %q: %w", s.table, err)
	}
	return s.waitActive(ctx)
}

// ErrNoStream means the table has no enabled stream (see WithStream).
var ErrNoStream = errors.New("the table has no stream")

// StreamARN returns the ARN of the table's enabled stream: one
// DescribeTable. It fails with ErrNoStream when the table has none.
func (s *Store) StreamARN(ctx context.Context) (string, error) {
	out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	if err != nil {
		return "", fmt.Errorf("describe table %q: %w", s.table, err)
	}
	spec := out.Table.StreamSpecification
	if spec == nil || !aws.ToBool(spec.StreamEnabled) || aws.ToString(out.Table.LatestStreamArn) == "" {
		return "", fmt.Errorf("table %q: %w", s.table, ErrNoStream)
	}
	return aws.ToString(out.Table.LatestStreamArn), nil
}

// enableTTL lets DynamoDB delete expired idempotency records. Expiry does
// not depend on it (a replay checks expiresAt itself); a table whose TTL
// is already on is fine.
func (s *Store) enableTTL(ctx context.Context) error {
	_, err := s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(s.table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true),
		},
	})
	var apiErr smithy.APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationException" && strings.Contains(apiErr.ErrorMessage(), "already enabled"):
		return nil
	}
	return fmt.Errorf("enable ttl on %q: %w", s.table, err)
}

// waitActive polls until the table and its index are ACTIVE.
func (s *Store) waitActive(ctx context.Context) error {
	for {
		out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
		if err != nil {
			return fmt.Errorf("describe table %q: %w", s.table, err)
		}
		ready := out.Table.TableStatus == types.TableStatusActive
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if g.IndexStatus != types.IndexStatusActive {
				ready = false
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for table %q: %w", s.table, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// Empty reports whether the table holds no item at all.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	// The whole table: a blog of a layout before publications, which no
	// publication sees yet, is not empty.
	out, err := s.db.Unconfined().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(s.table), Limit: aws.Int32(1), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, fmt.Errorf("scan %q: %w", s.table, err)
	}
	return len(out.Items) == 0, nil
}

// Ready reports whether the table answers a request. It returns the
// DynamoDB error when it does not.
func (s *Store) Ready(ctx context.Context) error {
	_, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table),
		Key:       dynamo.MustKey(s.ks.Stats()),
	})
	if err != nil {
		return fmt.Errorf("table %q: %w", s.table, err)
	}
	return nil
}
