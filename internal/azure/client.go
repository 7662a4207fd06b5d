package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/location"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/workitemtracking"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Site is Azure DevOps' client for one repository of a project, and one pull
// request when CI.PR is set. It implements forge.Site.
type Site struct {
	ci          forge.CI
	project     string
	repository  string
	base        string // the organization's (collection's) URL, no trailing slash
	origin      string
	hc          *http.Client
	root        azuredevops.Client
	areas       map[uuid.UUID]string // resource area → its URL, once discovered
	git         *git.ClientImpl
	wit         *workitemtracking.ClientImpl
	self        string
	states      map[string][]workitemtracking.WorkItemStateColor // by work item type
	workItemTyp string
	// refused is the redirect the client last refused: the library reads the
	// answer of a refused redirect as Azure DevOps' error (and fails on its closed
	// body), so the refusal is kept here for explain.
	refused error
}

// open is Kind.Open with the waits injected (tests record them).
func open(c forge.CI, base http.RoundTripper, wait func(context.Context, time.Duration) error) (*Site, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	api := strings.TrimRight(c.APIURL, "/")
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the Azure DevOps organization URL %q is not an http(s) URL such as https://dev.azure.com/org or https://tfs.example/tfs/DefaultCollection (SYSTEM_COLLECTIONURI, --azure-api-url)", c.APIURL)
	}
	project, repo, ok := strings.Cut(c.Repository, "/")
	if !ok || project == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("the Azure DevOps repository %q is not project/repository (SYSTEM_TEAMPROJECT and BUILD_REPOSITORY_NAME, --azure-repository)", c.Repository)
	}
	origin := forge.Origin(u)
	s := &Site{ci: c, project: project, repository: repo, base: api, origin: origin,
		states: map[string][]workitemtracking.WorkItemStateColor{}}
	refuse := forge.RefuseOtherOrigins(origin, "Azure DevOps", "--azure-api-url (SYSTEM_COLLECTIONURI)")
	s.hc = &http.Client{
		Transport: &forge.Transport{Next: base, Origin: origin, Credentials: credentials, Authorize: authorization(c.Token),
			Retry: retryAfter, Sleep: wait},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			err := refuse(req, via)
			s.refused = err
			return err
		},
		Timeout: 60 * time.Second,
	}
	// The library builds its clients with an http.Client of its own (no transport,
	// no redirect policy) when given a Connection alone; a client made by
	// NewClientWithOptions with WithHTTPClient carries ours. The Connection holds no
	// token: the transport authenticates, on the API's origin only. Suppressing the
	// federated-auth redirect makes a refused token a 401, not a 302 to a sign-in
	// page.
	conn := &azuredevops.Connection{BaseUrl: api, SuppressFedAuthRedirect: true, UserAgent: "drift"}
	s.root = *azuredevops.NewClientWithOptions(conn, api, azuredevops.WithHTTPClient(s.hc))
	return s, nil
}

// areaClient is a client for a resource area (git, wit) at the URL Azure DevOps
// names for it. Azure DevOps Services answers GET _apis/ResourceAreas with each
// area's URL (git and wit are the organization's own, https://dev.azure.com/org/;
// others, such as Graph, live on other hosts); Azure DevOps Server answers with an
// empty list, every area being the collection's. An area on another origin than the
// API URL is refused: the token goes to the API URL's origin only.
func (s *Site) areaClient(ctx context.Context, area uuid.UUID, name string) (azuredevops.Client, error) {
	if s.areas == nil {
		infos, err := s.root.GetResourceAreas(ctx)
		if err != nil {
			return azuredevops.Client{}, s.explain("discover the organization's resource areas (GET _apis/ResourceAreas)", err)
		}
		s.areas = map[uuid.UUID]string{}
		for _, a := range *infos {
			if a.Id != nil && a.LocationUrl != nil {
				s.areas[*a.Id] = *a.LocationUrl
			}
		}
	}
	at := s.base
	if len(s.areas) > 0 {
		loc, ok := s.areas[area]
		if !ok {
			return azuredevops.Client{}, fmt.Errorf("Azure DevOps at %s lists no %s resource area (GET _apis/ResourceAreas): check --azure-api-url (SYSTEM_COLLECTIONURI)", s.base, name)
		}
		u, err := url.Parse(loc)
		if err != nil || forge.Origin(u) != s.origin {
			return azuredevops.Client{}, fmt.Errorf("Azure DevOps places the %s resource area at %q, not at the API's origin %s; drift sends the token to that origin only: set --azure-api-url to the organization URL Azure DevOps names", name, loc, s.origin)
		}
		at = strings.TrimRight(loc, "/")
	}
	conn := &azuredevops.Connection{BaseUrl: at, SuppressFedAuthRedirect: true, UserAgent: "drift"}
	return *azuredevops.NewClientWithOptions(conn, at, azuredevops.WithHTTPClient(s.hc)), nil
}

func (s *Site) gitClient(ctx context.Context) (*git.ClientImpl, error) {
	if s.git == nil {
		c, err := s.areaClient(ctx, git.ResourceAreaId, "git")
		if err != nil {
			return nil, err
		}
		s.git = &git.ClientImpl{Client: c}
	}
	return s.git, nil
}

func (s *Site) witClient(ctx context.Context) (*workitemtracking.ClientImpl, error) {
	if s.wit == nil {
		c, err := s.areaClient(ctx, workitemtracking.ResourceAreaId, "work item tracking (Boards)")
		if err != nil {
			return nil, err
		}
		s.wit = &workitemtracking.ClientImpl{Client: c}
	}
	return s.wit, nil
}

// Self is the identity the token authenticates as (GET _apis/connectionData,
// authenticatedUser): the project's build service for System.AccessToken, the
// person for a personal access token. Its id, a GUID, is what comments' and work
// items' authors are compared by: display names are not unique, and anyone can
// name themselves "Project Collection Build Service".
func (s *Site) Self(ctx context.Context) (string, error) {
	if s.self != "" {
		return s.self, nil
	}
	if s.ci.Author != "" {
		s.self = s.ci.Author
		return s.self, nil
	}
	lc := location.ClientImpl{Client: s.root}
	cd, err := lc.GetConnectionData(ctx, location.GetConnectionDataArgs{})
	if err != nil {
		return "", s.explain("learn whom the token belongs to (GET _apis/connectionData)", err)
	}
	if cd.AuthenticatedUser == nil || cd.AuthenticatedUser.Id == nil || *cd.AuthenticatedUser.Id == uuid.Nil {
		return "", errors.New("Azure DevOps' answer to GET _apis/connectionData has no authenticated user: the request was anonymous; check the token (SYSTEM_ACCESSTOKEN mapped into the step's env, or DRIFT_AZURE_TOKEN)")
	}
	s.self = cd.AuthenticatedUser.Id.String()
	return s.self, nil
}
