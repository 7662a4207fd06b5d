package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Site are the flags of one forge of publish.Kinds (say Gitea, whose flags are
// --gitea-*): the pull request's comment and status, the tracked drift item, and
// each part of the context settable instead of the forge's pipeline variables.
type Site struct {
	Comment, Status, Issue bool
	// CI holds --X-token, --X-api-url, --X-repository, --X-pr, --X-sha, --X-run-url
	// and --X-author.
	CI forge.CI
}

// Sites are the flags of each forge of publish.Kinds, by its flag prefix.
type Sites map[string]*Site

// Of is the flags of the forge whose prefix is flag, added when missing.
func (s *Sites) Of(flag string) *Site {
	if *s == nil {
		*s = Sites{}
	}
	if (*s)[flag] == nil {
		(*s)[flag] = &Site{}
	}
	return (*s)[flag]
}

// siteFlagNames are the flag suffixes of a forge of publish.Kinds that publish.
var siteFlagNames = struct{ comment, status, issue string }{"-comment", "-status", "-issue"}

// apply adds the chosen forge of publish.Kinds to what publish is asked; one forge a
// run.
func (s Sites) apply(opts *publish.Options) error {
	for _, k := range publish.Kinds {
		site := s[k.Flag]
		if site == nil || (!site.Comment && !site.Issue) {
			continue
		}
		if opts.Comment || opts.Issue {
			other := "GitHub (--github-comment, --github-issue)"
			switch {
			case opts.Kind != nil:
				other = opts.Kind.Name + " (--" + opts.Kind.Flag + "-comment, --" + opts.Kind.Flag + "-issue)"
			case opts.Forge == publish.GitLab:
				other = "GitLab (--gitlab-note, --gitlab-issue)"
			}
			return errors.New("--" + k.Flag + "-comment and --" + k.Flag + "-issue publish to " + k.Name + ", and the run also publishes to " + other + ": one forge a run")
		}
		opts.Forge, opts.Kind, opts.CI = publish.GitHub, k, site.CI
		opts.Comment, opts.Check, opts.Issue = site.Comment, site.Status, site.Issue
	}
	return nil
}

// siteInCI is the forge of publish.Kinds whose pipeline the run is in (nil: none).
func (o *Run) siteInCI() *forge.Kind {
	for _, k := range publish.Kinds {
		if k.InCI(o.cfg.Getenv) {
			return k
		}
	}
	return nil
}

// siteBase is --base, else in a pull request pipeline of a forge of publish.Kinds
// the commit its change is compared with, as the pipeline's variables say.
func (o *Run) siteBase(base string) string {
	k := o.siteInCI()
	if o.given("base") || base != "" || k == nil {
		return base
	}
	c, err := k.FromEnv(o.cfg.Getenv)
	if err != nil {
		return base
	}
	return c.BaseSHA
}

// siteBranches are the branches a pipeline of a forge of publish.Kinds stands for
// (nil outside one).
func (o *Run) siteBranches() []string {
	k := o.siteInCI()
	if k == nil {
		return nil
	}
	c, _ := k.FromEnv(o.cfg.Getenv)
	return c.Branches
}

// siteFlags are the flags of every forge of publish.Kinds with the given suffixes.
func siteFlags(suffixes ...string) []string {
	var out []string
	for _, k := range publish.Kinds {
		for _, s := range suffixes {
			out = append(out, k.Flag+s)
		}
	}
	return out
}

// siteRefused says whether a forge of publish.Kinds refused drift for lack of
// permission (403).
func siteRefused(err error) bool {
	for _, k := range publish.Kinds {
		if k.StatusCode(err) == 403 {
			return true
		}
	}
	return false
}

// siteReviewFlag names the review of the forge of a pull request flag of
// publish.Kinds, and its tracked item, for detect's refusal ("" when name is none).
func siteReviewFlag(name string) (what, issue string) {
	for _, k := range publish.Kinds {
		if name == k.Flag+siteFlagNames.comment || name == k.Flag+siteFlagNames.status {
			return fmt.Sprintf("%s %s %s's", article(k.Name), k.Name, k.Review), fmt.Sprintf("%s %s (--%s%s)", article(k.Tracked), k.Tracked, k.Flag, siteFlagNames.issue)
		}
	}
	return "", ""
}

// article is "an" before a name that starts with a vowel, else "a".
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an"
	}
	return "a"
}
