package azure

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/webapi"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/workitemtracking"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// WorkItemTypes are the types a drift work item is made as, the first the project's
// process has: Issue (Basic, Agile, CMMI), Impediment (Scrum), then Bug and Task,
// which every process has under some name.
var WorkItemTypes = []string{"Issue", "Impediment", "Bug", "Task"}

// MaxTitle is Azure Boards' limit on System.Title (255 characters).
const MaxTitle = 255

// batch is the most work items GET/POST workitemsbatch returns at once.
const batch = 200

// The fields drift reads of a work item.
var fields = []string{"System.Id", "System.Title", "System.Description", "System.State", "System.WorkItemType", "System.CreatedBy"}

// Issues lists the project's work items tagged label (a WIQL query: Azure Boards has
// tags, not labels), 200 at a time through workitemsbatch, in id order. A work item
// is open unless its state is in the Completed or Removed category of its type.
func (s *Site) Issues(ctx context.Context, label string, each func(forge.Issue) bool) error {
	wc, err := s.witClient(ctx)
	if err != nil {
		return err
	}
	q := "SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project AND [System.Tags] CONTAINS '" +
		strings.ReplaceAll(label, "'", "''") + "' ORDER BY [System.Id]"
	res, err := wc.QueryByWiql(ctx, workitemtracking.QueryByWiqlArgs{Wiql: &workitemtracking.Wiql{Query: &q}, Project: &s.project})
	if err != nil {
		return s.explainBoards("query the work items tagged "+label, err)
	}
	var ids []int
	if res.WorkItems != nil {
		for _, r := range *res.WorkItems {
			if r.Id != nil {
				ids = append(ids, *r.Id)
			}
		}
	}
	for len(ids) > 0 {
		n := min(batch, len(ids))
		page := ids[:n]
		ids = ids[n:]
		items, err := wc.GetWorkItemsBatch(ctx, workitemtracking.GetWorkItemsBatchArgs{Project: &s.project,
			WorkItemGetRequest: &workitemtracking.WorkItemBatchGetRequest{Ids: &page, Fields: &fields}})
		if err != nil {
			return s.explainBoards("read the work items tagged "+label, err)
		}
		for _, wi := range *items {
			if wi.Id == nil || wi.Fields == nil {
				continue
			}
			f := *wi.Fields
			typ, _ := f["System.WorkItemType"].(string)
			state, _ := f["System.State"].(string)
			open, err := s.isOpen(ctx, typ, state)
			if err != nil {
				return err
			}
			body, _ := f["System.Description"].(string)
			if !each(forge.Issue{ID: int64(*wi.Id), Body: body, Open: open, Author: fieldIdentity(f["System.CreatedBy"])}) {
				return nil
			}
		}
	}
	return nil
}

// EnsureLabel does nothing: Azure Boards creates a tag with the first work item
// that carries it (the identity needs "Create tag definition", which a new tag
// asks for, refused with a 403 otherwise).
func (s *Site) EnsureLabel(context.Context, string) error { return nil }

// CreateIssue makes a work item of the first of WorkItemTypes the project has,
// tagged label, its description in Markdown (Azure Boards keeps a multiline
// field's format per field: /multilineFieldsFormat/System.Description).
func (s *Site) CreateIssue(ctx context.Context, title, body, label string) (forge.Issue, error) {
	wc, err := s.witClient(ctx)
	if err != nil {
		return forge.Issue{}, err
	}
	typ, err := s.workItemType(ctx)
	if err != nil {
		return forge.Issue{}, err
	}
	doc := append([]webapi.JsonPatchOperation{op("/fields/System.Title", cut(title, MaxTitle)), op("/fields/System.Tags", label)}, description(body)...)
	wi, err := wc.CreateWorkItem(ctx, workitemtracking.CreateWorkItemArgs{Document: &doc, Project: &s.project, Type: &typ})
	if err != nil {
		return forge.Issue{}, s.explainBoards("create the drift work item ("+typ+")", err)
	}
	if wi.Id == nil {
		return forge.Issue{}, errors.New("Azure Boards' answer to the new work item has no id")
	}
	return forge.Issue{ID: int64(*wi.Id), Body: body, Open: true}, nil
}

// EditIssue changes a work item's title or description, or moves it to its type's
// first state of the Completed category (closing) or of the Proposed category, else
// InProgress (reopening).
func (s *Site) EditIssue(ctx context.Context, id int64, e forge.IssueEdit) error {
	wc, err := s.witClient(ctx)
	if err != nil {
		return err
	}
	var doc []webapi.JsonPatchOperation
	if e.Title != nil {
		doc = append(doc, op("/fields/System.Title", cut(*e.Title, MaxTitle)))
	}
	if e.Body != nil {
		doc = append(doc, description(*e.Body)...)
	}
	what := "update the drift work item " + s.IssueRef(id)
	if e.Open != nil {
		state, err := s.stateFor(ctx, wc, id, *e.Open)
		if err != nil {
			return err
		}
		doc = append(doc, op("/fields/System.State", state))
		what = "move the drift work item " + s.IssueRef(id) + " to " + state
	}
	n := int(id)
	if _, err := wc.UpdateWorkItem(ctx, workitemtracking.UpdateWorkItemArgs{Document: &doc, Id: &n, Project: &s.project}); err != nil {
		return s.explainBoards(what, err)
	}
	return nil
}

// CommentOnIssue adds a Markdown comment to a work item's discussion.
func (s *Site) CommentOnIssue(ctx context.Context, id int64, body string) error {
	wc, err := s.witClient(ctx)
	if err != nil {
		return err
	}
	n, format := int(id), workitemtracking.CommentFormatValues.Markdown
	if _, err := wc.AddWorkItemComment(ctx, workitemtracking.AddWorkItemCommentArgs{Request: &workitemtracking.CommentCreate{Text: &body},
		Project: &s.project, WorkItemId: &n, Format: &format}); err != nil {
		return s.explainBoards("comment on the drift work item "+s.IssueRef(id), err)
	}
	return nil
}

// IssueRef is "#id", how Azure DevOps links a work item in a comment or a
// description.
func (s *Site) IssueRef(id int64) string { return "#" + strconv.FormatInt(id, 10) }

// workItemType is the first of WorkItemTypes the project has and has not disabled.
func (s *Site) workItemType(ctx context.Context) (string, error) {
	if s.workItemTyp != "" {
		return s.workItemTyp, nil
	}
	wc, err := s.witClient(ctx)
	if err != nil {
		return "", err
	}
	types, err := wc.GetWorkItemTypes(ctx, workitemtracking.GetWorkItemTypesArgs{Project: &s.project})
	if err != nil {
		return "", s.explainBoards("list the project's work item types", err)
	}
	have := map[string]bool{}
	for _, t := range *types {
		if t.Name != nil && (t.IsDisabled == nil || !*t.IsDisabled) {
			have[strings.ToLower(*t.Name)] = true
		}
	}
	for _, want := range WorkItemTypes {
		if have[strings.ToLower(want)] {
			s.workItemTyp = want
			return want, nil
		}
	}
	return "", fmt.Errorf("the project %q has none of the work item types %s that drift makes its work item as (docs/azure-devops.md)", s.project, strings.Join(WorkItemTypes, ", "))
}

// states are a work item type's states, in the order the process lists them.
func (s *Site) statesOf(ctx context.Context, typ string) ([]workitemtracking.WorkItemStateColor, error) {
	if st, ok := s.states[typ]; ok {
		return st, nil
	}
	wc, err := s.witClient(ctx)
	if err != nil {
		return nil, err
	}
	st, err := wc.GetWorkItemTypeStates(ctx, workitemtracking.GetWorkItemTypeStatesArgs{Project: &s.project, Type: &typ})
	if err != nil {
		return nil, s.explainBoards("read the states of the work item type "+typ, err)
	}
	s.states[typ] = *st
	return *st, nil
}

// isOpen says whether a work item in state is open: its category, in its type, is
// neither Completed nor Removed.
func (s *Site) isOpen(ctx context.Context, typ, state string) (bool, error) {
	st, err := s.statesOf(ctx, typ)
	if err != nil {
		return false, err
	}
	for _, c := range st {
		if c.Name != nil && strings.EqualFold(*c.Name, state) {
			cat := derefs(c.Category)
			return cat != "Completed" && cat != "Removed", nil
		}
	}
	return true, nil
}

// stateFor is the state that opens (open) or closes a work item of id's type.
func (s *Site) stateFor(ctx context.Context, wc *workitemtracking.ClientImpl, id int64, open bool) (string, error) {
	n := int(id)
	wi, err := wc.GetWorkItem(ctx, workitemtracking.GetWorkItemArgs{Id: &n, Project: &s.project, Fields: &[]string{"System.WorkItemType"}})
	if err != nil {
		return "", s.explainBoards("read the drift work item "+s.IssueRef(id), err)
	}
	typ := ""
	if wi.Fields != nil {
		typ, _ = (*wi.Fields)["System.WorkItemType"].(string)
	}
	st, err := s.statesOf(ctx, typ)
	if err != nil {
		return "", err
	}
	want := []string{"Completed"}
	if open {
		want = []string{"Proposed", "InProgress"}
	}
	for _, cat := range want {
		for _, c := range st {
			if derefs(c.Category) == cat && c.Name != nil {
				return *c.Name, nil
			}
		}
	}
	return "", fmt.Errorf("the work item type %q has no state in the %s category, which drift moves its work item %s to", typ, strings.Join(want, " or "), s.IssueRef(id))
}

func op(path string, value any) webapi.JsonPatchOperation {
	add := webapi.OperationValues.Add
	return webapi.JsonPatchOperation{Op: &add, Path: &path, Value: value}
}

// description sets System.Description to body and its format to Markdown, in that
// order: Azure Boards reads the value in the format the same document sets.
func description(body string) []webapi.JsonPatchOperation {
	return []webapi.JsonPatchOperation{op("/fields/System.Description", body), op("/multilineFieldsFormat/System.Description", "Markdown")}
}

// identityID is an identity reference's id ("" for none).
func identityID(r *webapi.IdentityRef) string {
	if r == nil || r.Id == nil {
		return ""
	}
	return *r.Id
}

// fieldIdentity is the id of an identity field's value (System.CreatedBy), which the
// API answers as an object ({"displayName", "id", "uniqueName", ...}).
func fieldIdentity(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	id, _ := m["id"].(string)
	return id
}
