package publish

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/report"
)

// writeJSONReport writes the JSON copy of the report (--json-report).
func (r *run) writeJSONReport(path string) error {
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, r.rep); err != nil {
		return err
	}
	if err := files.Write(r.files(), path, buf.Bytes()); err != nil {
		return fmt.Errorf("--json-report: %w", err)
	}
	return nil
}

// files is where the run's files go: Deps.Files, else the process's.
func (r *run) files() files.FS { return files.Or(r.deps.Files) }

// writeOutputs appends the step outputs the Action declares to path ($GITHUB_OUTPUT).
func (r *run) writeOutputs(path, jsonReport, htmlReport string) error {
	if path == "" {
		return fmt.Errorf("--github-output: GITHUB_OUTPUT is not set (it is in a GitHub Actions step)")
	}
	s := r.rep.Summary
	out := fmt.Sprintf("has-changes=%t\ncounts=%s\nadd=%d\nmodify=%d\ndelete=%d\nunchanged=%d\nerrors=%d\ncomplete=%t\nrisky=%d\npolicy-failed=%t\nreport-json=%s\nreport-html=%s\n",
		s.Changes() > 0, s.Line(), s.Add, s.Modify, s.Delete, s.Unchanged, s.Error, r.rep.Complete, s.Risky, r.rep.PolicyFailed(), jsonReport, htmlReport)
	if err := files.AppendTo(r.files(), path, []byte(out)); err != nil {
		return fmt.Errorf("--github-output: %w", err)
	}
	return nil
}

// appendStepSummary appends the markdown report to the job summary file.
func (r *run) appendStepSummary(path, md string) error {
	if err := files.AppendTo(r.files(), path, []byte(md+"\n")); err != nil {
		return fmt.Errorf("failed to write the job summary %s: %w", path, err)
	}
	return nil
}

// writeDotenv appends the outputs to path as a GitLab CI dotenv report: DRIFT_*=value
// lines (GitLab's dotenv takes no quotes or multi-line values; none of these has
// either).
func (r *run) writeDotenv(path, jsonReport, htmlReport string) error {
	s := r.rep.Summary
	out := fmt.Sprintf("DRIFT_HAS_CHANGES=%t\nDRIFT_COUNTS=%s\nDRIFT_ADD=%d\nDRIFT_MODIFY=%d\nDRIFT_DELETE=%d\nDRIFT_UNCHANGED=%d\nDRIFT_ERRORS=%d\nDRIFT_COMPLETE=%t\nDRIFT_RISKY=%d\nDRIFT_POLICY_FAILED=%t\nDRIFT_REPORT_JSON=%s\nDRIFT_REPORT_HTML=%s\n",
		s.Changes() > 0, s.Line(), s.Add, s.Modify, s.Delete, s.Unchanged, s.Error, r.rep.Complete, s.Risky, r.rep.PolicyFailed(), oneLine(jsonReport), oneLine(htmlReport))
	if err := files.AppendTo(r.files(), path, []byte(out)); err != nil {
		return fmt.Errorf("--gitlab-dotenv: %w", err)
	}
	return nil
}

// oneLine keeps a value on its line of a dotenv file.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
