package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	graphpkg "github.com/blogql/blog/graph"
)

// The mixed workload's generators of author, category, post and preview
// calls: each builds one call from what its client knows of the blog
// (mixed_model_test.go), with the refusals its situation explains.

func nextCreateAuthor(c *mixClient) *mixCall {
	m := c.m
	subject := "new-" + c.tag()
	in := CreateAuthorInput{Subject: &subject, Name: "Author " + subject}
	var refusals []string
	switch c.rng.IntN(10) {
	case 0, 1:
		subject = m.users[c.rng.IntN(len(m.users))].id
		refusals = append(refusals, "CONFLICT/ALREADY_EXISTS")
	case 2, 3:
		// Another author's slug, old or current.
		slug, taken := c.authorSlug(nil)
		in.Slug = &slug
		if taken {
			refusals = append(refusals, "CONFLICT/SLUG_TAKEN")
		}
	}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := CreateAuthor(ctx, c.user.client, in)
		if err != nil {
			return "", err
		}
		a := r.CreateAuthor.Author
		return fmt.Sprintf("%s v%d %s", a.Id, a.Version, a.Slug), nil
	}}
}

func nextUpdateAuthor(what string) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		target := c.user
		if c.rng.IntN(10) < 3 {
			target = m.users[c.rng.IntN(len(m.users))]
		}
		in := UpdateAuthorInput{Id: target.gid}
		var refusals []string
		switch what {
		case "name":
			in.Name = ptr("Name " + c.tag())
		case "bio":
			in.Bio = ptr("Bio " + c.tag())
		case "slug":
			slug, taken := c.authorSlug(target)
			in.Slug = &slug
			if taken {
				refusals = append(refusals, "CONFLICT/SLUG_TAKEN")
			}
		}
		if c.rng.IntN(2) == 0 {
			m.mu.Lock()
			in.ExpectedVersion = ptr(m.authorVer[target.id])
			m.mu.Unlock()
			refusals = append(refusals, "CONFLICT/VERSION_CONFLICT")
		}
		if !c.user.admin && target != c.user {
			refusals = append(refusals, graphpkg.CodeForbidden)
		}
		return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdateAuthor(ctx, c.user.client, in)
			if err != nil {
				if v, ok := extension(err, "currentVersion").(float64); ok {
					m.mu.Lock()
					m.authorVer[target.id] = max(m.authorVer[target.id], int(v))
					m.mu.Unlock()
				}
				return "", err
			}
			a := r.UpdateAuthor.Author
			m.mu.Lock()
			m.authorVer[target.id] = max(m.authorVer[target.id], a.Version)
			m.mu.Unlock()
			m.setAuthorSlug(target.id, a.Slug)
			return fmt.Sprintf("%s v%d %q %q %s", a.Id, a.Version, a.Name, a.Bio, a.Slug), nil
		}}
	}
}

func nextCreateCategory(c *mixClient) *mixCall {
	m := c.m
	slug := "cat-" + c.tag()
	var refusals []string
	if c.rng.IntN(5) == 0 {
		m.mu.Lock()
		slug = m.cats[c.rng.IntN(len(m.cats))]
		m.mu.Unlock()
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := CreateCategory(ctx, c.user.client, CreateCategoryInput{Slug: slug, Name: "Category " + slug, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		cat := r.CreateCategory.Category
		m.mu.Lock()
		if !slices.Contains(m.cats, cat.Slug) {
			m.cats = append(m.cats, cat.Slug)
			m.catVer[cat.Slug] = cat.Version
		}
		m.mu.Unlock()
		return fmt.Sprintf("%s v%d", cat.Slug, cat.Version), nil
	}}
}

func nextUpdateCategory(rename bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		m.mu.Lock()
		slug := m.cats[c.rng.IntN(len(m.cats))]
		in := UpdateCategoryInput{Slug: &slug}
		var refusals []string
		if c.rng.IntN(2) == 0 {
			in.ExpectedVersion = ptr(m.catVer[slug])
			refusals = append(refusals, graphpkg.CodeConflict)
		}
		m.mu.Unlock()
		if rename {
			in.Name = ptr("Name " + c.tag())
		} else {
			in.Description = ptr("About " + c.tag())
		}
		if !c.user.admin {
			refusals = append(refusals, graphpkg.CodeForbidden)
		}
		return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdateCategory(ctx, c.user.client, in)
			if err != nil {
				if v, ok := extension(err, "currentVersion").(float64); ok {
					m.mu.Lock()
					m.catVer[slug] = max(m.catVer[slug], int(v))
					m.mu.Unlock()
				}
				return "", err
			}
			cat := r.UpdateCategory.Category
			m.mu.Lock()
			m.catVer[slug] = max(m.catVer[slug], cat.Version)
			m.mu.Unlock()
			return fmt.Sprintf("%s v%d %q %q", cat.Slug, cat.Version, cat.Name, cat.Description), nil
		}}
	}
}

func nextCreatePost(c *mixClient) *mixCall {
	m := c.m
	// The body is the marker: edits keep it before " | ".
	body := "post " + c.tag()
	in := CreatePostInput{Title: "Title " + body, Slug: "p-" + c.tag(), Categories: c.categories(),
		Excerpt: ptr("Excerpt"), Body: &body}
	c.coAuthorsAndTags(&in)
	var refusals []string
	switch c.rng.IntN(10) {
	case 0, 1:
		// Another post's slug, current (SLUG_TAKEN) or old (a redirect
		// the new post takes).
		var taken bool
		if in.Slug, taken = c.postSlug(nil); taken {
			refusals = append(refusals, "CONFLICT/SLUG_TAKEN")
		}
	case 2:
		in.Categories = append(in.Categories, "no-such-category")
		refusals = append(refusals, graphpkg.CodeBadUserInput)
	}
	e := m.expect(body)
	return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := CreatePost(ctx, c.user.client, in)
		if err != nil {
			return "", err
		}
		p := r.CreatePost.Post
		m.mu.Lock()
		if m.postEffect[p.Id] == nil {
			m.postEffect[p.Id] = e
			m.posts = append(m.posts, &mixPost{gid: p.Id, owner: c.user.id, slug: p.Slug, version: p.Version, marker: body})
		}
		m.mu.Unlock()
		return fmt.Sprintf("%s v%d %s", p.Id, p.Version, p.Slug), nil
	}, done: m.written(e)}
}

func postResult(p PostSummary, version int) string {
	at, cover := "", ""
	if p.PublishedAt != nil {
		at = p.PublishedAt.Format(time.RFC3339Nano)
	}
	if p.CoverImage != nil {
		cover = p.CoverImage.Url
	}
	return fmt.Sprintf("%s v%d %s %q %s %s %d", p.Id, version, p.Slug, p.Title, at, cover, p.WordCount)
}

func nextUpdatePost(what string) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		p := c.post()
		if p == nil {
			return nil
		}
		in := UpdatePostInput{Id: p.gid, ExpectedVersion: p.version}
		refusals := c.postRefusals(p, graphpkg.CodeConflict)
		tag := c.tag()
		switch what {
		case "title":
			in.Title = ptr("Edited " + tag)
		case "slug":
			slug, _ := c.postSlug(p)
			in.Slug = &slug
		case "categories":
			in.Categories = c.categories()
			if in.Categories == nil {
				in.Categories = []string{}
			}
		case "content":
			marker := p.marker
			if marker == "" {
				marker = p.slug
			}
			in.Body = ptr(marker + " | edited " + tag + "\n\n## Part " + tag + "\n\nSome *words* of " + tag + ".\n\n### More\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
			switch c.rng.IntN(3) {
			case 0:
				in.CoverImage = &ImageInput{Url: "https://img.example.com/" + tag + ".png", Alt: ptr("Cover " + tag), Width: ptr(1200), Height: ptr(630)}
			case 1:
				in.Seo = &SeoInput{Title: ptr("SEO " + tag), Description: ptr("About " + tag),
					CanonicalUrl: ptr("https://blog.example.com/" + tag), OgImage: ptr("https://img.example.com/og-" + tag + ".png")}
			default:
				in.CoverImage = &ImageInput{Url: "https://img.example.com/" + tag + ".jpg"}
				in.Seo = &SeoInput{Description: ptr("")}
			}
		}
		return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdatePost(ctx, c.user.client, in)
			if err != nil {
				m.learn(p.gid, err)
				return "", err
			}
			got := r.UpdatePost.Post
			m.setVersion(p.gid, got.Version)
			m.setPostSlug(p.gid, got.Slug)
			cats := make([]string, len(got.Categories))
			for i, cat := range got.Categories {
				cats[i] = cat.Slug
			}
			return postResult(got.PostSummary, got.Version) + " " + strings.Join(cats, ","), nil
		}}
	}
}

func nextRemoveCover(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	return &mixCall{refusals: c.postRefusals(p, graphpkg.CodeConflict), send: func(ctx context.Context, key *string) (string, error) {
		r, err := RemoveCoverImage(ctx, c.user.client, p.gid, p.version, key)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		got := r.UpdatePost.Post
		m.setVersion(p.gid, got.Version)
		if got.CoverImage != nil {
			m.fail("removeCoverImage of %s: the post still has the cover %s", p.gid, got.CoverImage.Url)
		}
		return fmt.Sprintf("%s v%d", got.Id, got.Version), nil
	}}
}

// nextPublishPost publishes now (when 0), in the past (-1) or in the
// future (1).
func nextPublishPost(when int) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		p := c.post()
		if p == nil {
			return nil
		}
		in := PublishPostInput{Id: p.gid}
		switch now := m.servers[holding].clock.Now(); when {
		case -1:
			in.At = ptr(now.Add(-time.Duration(1+c.rng.IntN(48)) * time.Hour))
		case 1:
			in.At = ptr(now.Add(time.Duration(1+c.rng.IntN(10)) * time.Minute))
		}
		refusals := c.postRefusals(p)
		if c.rng.IntN(3) == 0 {
			in.ExpectedVersion = ptr(p.version)
			refusals = append(refusals, graphpkg.CodeConflict)
		}
		return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := PublishPost(ctx, c.user.client, in)
			if err != nil {
				m.learn(p.gid, err)
				return "", err
			}
			got := r.PublishPost.Post
			m.setVersion(p.gid, got.Version)
			return postResult(got.PostSummary, got.Version), nil
		}}
	}
}

func nextUnpublishPost(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := UnpublishPostInput{Id: p.gid}
	// A draft is not published: BAD_USER_INPUT.
	refusals := c.postRefusals(p, graphpkg.CodeBadUserInput)
	if c.rng.IntN(3) == 0 {
		in.ExpectedVersion = ptr(p.version)
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	return &mixCall{refusals: refusals, flips: []string{graphpkg.CodeBadUserInput}, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := UnpublishPost(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		got := r.UnpublishPost.Post
		m.setVersion(p.gid, got.Version)
		return postResult(got.PostSummary, got.Version), nil
	}}
}

func nextDeletePost(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := DeletePostInput{Id: p.gid}
	refusals := c.postRefusals(p)
	if c.rng.IntN(3) == 0 {
		in.ExpectedVersion = ptr(p.version)
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := DeletePost(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		return r.DeletePost.Post.Id + " " + r.DeletePost.Post.Slug, nil
	}, done: func(string, bool) {
		// The post and its comments may be gone: nothing of them is
		// expected in the table any more.
		m.mu.Lock()
		defer m.mu.Unlock()
		if e := m.postEffect[p.gid]; e != nil {
			e.gone = true
		}
		for _, e := range m.effects {
			if strings.HasPrefix(e.marker, "comment on "+p.gid+" ") {
				e.gone = true
			}
		}
	}}
}

// nextCreatePreviewLink makes a preview link of a post, sometimes one
// that expires within minutes of the blog's time.
func nextCreatePreviewLink(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := CreatePreviewLinkInput{PostId: p.gid}
	if c.rng.IntN(3) == 0 {
		in.ExpiresIn = ptr(60 + c.rng.IntN(600))
	}
	return &mixCall{keyless: true, refusals: c.postRefusals(p), send: func(ctx context.Context, _ *string) (string, error) {
		r, err := CreatePreviewLink(ctx, c.user.client, in)
		if err != nil {
			return "", err
		}
		l := r.CreatePreviewLink
		if l.Post.Id != p.gid {
			m.fail("createPreviewLink of %s returned post %s", p.gid, l.Post.Id)
		}
		m.mu.Lock()
		m.previews = append(m.previews, mixPreview{token: l.Token, post: p.gid})
		m.mu.Unlock()
		return l.Token, nil
	}}
}

// nextPreview reads a post by one of the last preview tokens made,
// anonymously, while posts are unpublished, deleted and edited: it shows
// the token's post, or NOT_FOUND (deleted, or the token expired) with the
// one message of a preview that shows nothing.
func nextPreview(c *mixClient) *mixCall {
	m := c.m
	m.mu.Lock()
	n := len(m.previews)
	if n == 0 {
		m.mu.Unlock()
		return nil
	}
	pv := m.previews[n-1-c.rng.IntN(min(n, 20))]
	m.mu.Unlock()
	anon := m.anon[c.rng.IntN(2)]
	return &mixCall{keyless: true, refusals: []string{graphpkg.CodeNotFound}, send: func(ctx context.Context, _ *string) (string, error) {
		r, err := Preview(ctx, anon, pv.token)
		if err != nil {
			if code(err) == graphpkg.CodeNotFound {
				msg, _, _, _ := errInfo(err)
				m.mu.Lock()
				if m.notFound == "" {
					m.notFound = msg
				}
				first := m.notFound
				m.mu.Unlock()
				if msg != first {
					m.fail("a preview that shows nothing says %q, another %q", msg, first)
				}
			}
			return "", err
		}
		if r.Post.Id != pv.post {
			m.fail("the preview token of post %s showed post %s", pv.post, r.Post.Id)
		}
		return r.Post.Id, nil
	}}
}
