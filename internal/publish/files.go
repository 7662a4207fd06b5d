package publish

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drift-gitops/drift/internal/report"
)

// writeJSONReport writes the JSON copy of the report (--json-report).
func writeJSONReport(path string, rep *report.Report) error {
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, rep); err != nil {
		return err
	}
	if err := writeFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("--json-report: %w", err)
	}
	return nil
}

// writeFile writes a file, creating its directory.
func writeFile(path string, data []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, data, 0o644)
}

// writeOutputs appends the step outputs the Action declares to path ($GITHUB_OUTPUT).
func writeOutputs(path string, rep *report.Report, jsonReport, htmlReport string) error {
	if path == "" {
		return fmt.Errorf("--github-output: GITHUB_OUTPUT is not set (it is in a GitHub Actions step)")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("--github-output: %w", err)
	}
	s := rep.Summary
	_, werr := fmt.Fprintf(f, "has-changes=%t\ncounts=%s\nadd=%d\nmodify=%d\ndelete=%d\nunchanged=%d\nerrors=%d\ncomplete=%t\nrisky=%d\npolicy-failed=%t\nreport-json=%s\nreport-html=%s\n",
		s.Changes() > 0, s.Line(), s.Add, s.Modify, s.Delete, s.Unchanged, s.Error, rep.Complete, s.Risky, rep.PolicyFailed(), jsonReport, htmlReport)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// appendStepSummary appends the markdown report to the job summary file.
func appendStepSummary(path, md string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("failed to open the job summary %s: %w", path, err)
	}
	_, werr := f.WriteString(md + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("failed to write the job summary %s: %w", path, werr)
	}
	return nil
}

// writeDotenv appends the outputs to path as a GitLab CI dotenv report: DRIFT_*=value
// lines (GitLab's dotenv takes no quotes or multi-line values; none of these has
// either).
func writeDotenv(path string, rep *report.Report, jsonReport, htmlReport string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("--gitlab-dotenv: %w", err)
	}
	s := rep.Summary
	_, werr := fmt.Fprintf(f, "DRIFT_HAS_CHANGES=%t\nDRIFT_COUNTS=%s\nDRIFT_ADD=%d\nDRIFT_MODIFY=%d\nDRIFT_DELETE=%d\nDRIFT_UNCHANGED=%d\nDRIFT_ERRORS=%d\nDRIFT_COMPLETE=%t\nDRIFT_RISKY=%d\nDRIFT_POLICY_FAILED=%t\nDRIFT_REPORT_JSON=%s\nDRIFT_REPORT_HTML=%s\n",
		s.Changes() > 0, s.Line(), s.Add, s.Modify, s.Delete, s.Unchanged, s.Error, rep.Complete, s.Risky, rep.PolicyFailed(), oneLine(jsonReport), oneLine(htmlReport))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// oneLine keeps a value on its line of a dotenv file.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
