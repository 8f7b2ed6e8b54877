package legacytest

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ToLayout3 turns a table in layout 4 into one of layout 3, the layout of
// the version before posts had body and count items: each post's body
// item (body, bodyHtml, toc) and count item (commentCount, threadCount)
// go back onto its post item and are deleted, a published post goes back
// to its feed shard (FEED#0..3), and the layout item says 3. It returns
// how many posts it changed. The tests of the migration to layout 4 start
// from a blog written by the current version and turned back by it.
func ToLayout3(ctx context.Context, db *dynamodb.Client, table string) (int, error) {
	parts := map[string]map[string]map[string]types.AttributeValue{} // by PK, then type
	var posts []map[string]types.AttributeValue
	copies := map[string][]map[string]types.AttributeValue{} // by post id
	err := scan(ctx, db, table, func(it map[string]types.AttributeValue) error {
		pk, sk, kind := str(it["PK"]), str(it["SK"]), str(it["type"])
		switch {
		case kind == "post" && pk == sk:
			posts = append(posts, it)
		case kind == "authorPost" || kind == "categoryPost" || kind == "tagPost" || kind == "featuredPost":
			copies[str(it["id"])] = append(copies[str(it["id"])], it)
		case kind == "postBody" || kind == "postCount":
			if parts[pk] == nil {
				parts[pk] = map[string]map[string]types.AttributeValue{}
			}
			parts[pk][kind] = it
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, p := range posts {
		pk := str(p["PK"])
		for _, a := range []string{"bodySum", "htmlSum"} {
			delete(p, a)
		}
		if b := parts[pk]["postBody"]; b != nil {
			for _, a := range []string{"body", "bodyHtml", "toc"} {
				if v, ok := b[a]; ok {
					p[a] = v
				}
			}
		}
		if c := parts[pk]["postCount"]; c != nil {
			p["commentCount"] = c["commentCount"]
			// Layout 3's comments counted on every copy too.
			for _, cp := range copies[str(p["id"])] {
				cp["commentCount"] = c["commentCount"]
				if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: cp}); err != nil {
					return 0, fmt.Errorf("copy of %s: %w", pk, err)
				}
			}
			if n := str(c["threadCount"]); n != "" && n != "0" {
				p["threadCount"] = c["threadCount"]
			} else {
				delete(p, "threadCount")
			}
		}
		if str(p["GSI1PK"]) == "FEED" {
			p["GSI1PK"] = &types.AttributeValueMemberS{Value: feedShard(str(p["id"]))}
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: p}); err != nil {
			return 0, fmt.Errorf("post %s: %w", pk, err)
		}
		for _, part := range parts[pk] {
			if err := deleteItem(ctx, db, table, part); err != nil {
				return 0, fmt.Errorf("part of %s: %w", pk, err)
			}
		}
	}
	layout := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "LAYOUT"}, "SK": &types.AttributeValueMemberS{Value: "LAYOUT"},
		"type": &types.AttributeValueMemberS{Value: "layout"}, "version": &types.AttributeValueMemberN{Value: "3"},
		"migratedAt": &types.AttributeValueMemberS{Value: keyTime(time.Unix(0, 0))},
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: layout}); err != nil {
		return 0, err
	}
	return len(posts), nil
}

// str returns a string or number attribute's text ("" for none).
func str(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	}
	return ""
}
