package forge

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// memory is a forge in memory: its notes and issues, who drift is, and what was
// asked of it.
type memory struct {
	self   string
	notes  []Note
	issues []Issue
	asked  []string
}

func (m *memory) Self(context.Context) (string, error) {
	m.asked = append(m.asked, "self")
	return m.self, nil
}

func (m *memory) Notes(_ context.Context, each func(Note) bool) error {
	for _, n := range m.notes {
		m.asked = append(m.asked, fmt.Sprint("read ", n.ID))
		if !each(n) {
			return nil
		}
	}
	return nil
}

func (m *memory) CreateNote(_ context.Context, body string) (Note, error) {
	n := Note{ID: int64(len(m.notes) + 1), Body: body, Author: m.self}
	m.notes = append(m.notes, n)
	m.asked = append(m.asked, "create")
	return n, nil
}

func (m *memory) UpdateNote(_ context.Context, id int64, body string) error {
	m.asked = append(m.asked, fmt.Sprint("update ", id))
	m.notes[id-1].Body = body
	return nil
}

func (m *memory) Issues(_ context.Context, _ string, each func(Issue) bool) error {
	for _, is := range m.issues {
		if !each(is) {
			return nil
		}
	}
	return nil
}

func (m *memory) EnsureLabel(context.Context, string) error { return nil }

func (m *memory) CreateIssue(_ context.Context, _, body, _ string) (Issue, error) {
	is := Issue{ID: int64(len(m.issues) + 1), Body: body, Open: true, Author: m.self}
	m.issues = append(m.issues, is)
	return is, nil
}

func (m *memory) EditIssue(_ context.Context, id int64, e IssueEdit) error {
	m.asked = append(m.asked, fmt.Sprint("edit ", id))
	return nil
}

func (m *memory) CommentOnIssue(context.Context, int64, string) error { return nil }

func (m *memory) IssueRef(id int64) string { return fmt.Sprint("#", id) }

// TestUpsertEditsTheOldestOwnNoteAndAsksWhoOnlyWhenNeeded: drift learns its login only
// when a marked note needs judging, once; it updates the oldest marked note it wrote,
// reading no further; logins compare case-insensitively.
func TestUpsertEditsTheOldestOwnNoteAndAsksWhoOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	m := Marker([]string{"web"})
	cases := []struct {
		name  string
		notes []Note
		how   string
		asked string
	}{
		{"no marked note", []Note{{ID: 1, Body: "hello", Author: "a"}}, "created", "read 1,create"},
		{"another's, then two of drift's", []Note{{ID: 1, Body: m + "\nfake", Author: "mallory"}, {ID: 2, Body: m + "\nold", Author: "Drift-Bot"},
			{ID: 3, Body: m + "\nolder copy", Author: "drift-bot"}}, "updated", "read 1,self,read 2,update 2"},
		{"another target set's", []Note{{ID: 1, Body: Marker([]string{"api"}) + "\nx", Author: "drift-bot"}}, "created", "read 1,create"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &memory{self: "drift-bot", notes: c.notes}
			var warned []string
			how, err := Upsert(context.Background(), f, m, "body", "note", func(s string) { warned = append(warned, s) })
			if err != nil || how != c.how || strings.Join(f.asked, ",") != c.asked {
				t.Errorf("%s %v, asked %v; want %s, %s", how, err, f.asked, c.how, c.asked)
			}
			if len(warned) != 0 {
				t.Errorf("warned %q", warned)
			}
		})
	}
}

// TestDriftIssueTakesTheNewestOwnIssue: of drift's marked issues the newest is kept;
// another's is never edited.
func TestDriftIssueTakesTheNewestOwnIssue(t *testing.T) {
	t.Parallel()
	m := Marker(nil)
	f := &memory{self: "drift-bot", issues: []Issue{{ID: 1, Body: m, Author: "drift-bot"}, {ID: 2, Body: m, Author: "drift-bot", Open: true}, {ID: 3, Body: m, Author: "mallory", Open: true}}}
	how, err := DriftIssue(context.Background(), f, "drift", m, "fp", true, "t", "b", nil)
	if err != nil || how != "updated issue #2" || strings.Join(f.asked, ",") != "self,edit 2" {
		t.Errorf("%s %v %v", how, err, f.asked)
	}
}
