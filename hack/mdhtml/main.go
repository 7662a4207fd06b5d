// Command mdhtml renders a markdown report as GitHub renders a comment, close enough
// for a picture: GitHub-flavoured markdown (tables, alerts shown as quotes) on a page
// styled like a pull request comment, for hack/screenshots.sh.
//
//	go run ./hack/mdhtml comment.md > comment.html
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

const page = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>drift comment</title><style>
body { margin: 0; background: #f6f8fa; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; }
.comment { max-width: 860px; margin: 24px auto; background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
.head { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px; color: #59636e; border-radius: 6px 6px 0 0; }
.head b { color: #1f2328; }
.body { padding: 16px; }
h3 { font-size: 1.25em; margin-top: 0; }
h4 { font-size: 1em; margin: 1.2em 0 .5em; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: rgba(175,184,193,.2); padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 12px; border-radius: 6px; overflow: auto; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 12px; }
tr:nth-child(2n) { background: #f6f8fa; }
blockquote { margin: 0 0 12px; padding: 0 12px; border-left: 4px solid #cf222e; color: #1f2328; }
ul { padding-left: 2em; }
details { margin: 4px 0; }
summary { cursor: pointer; }
a { color: #0969da; text-decoration: none; }
</style></head><body><div class="comment"><div class="head"><b>github-actions</b> bot commented</div><div class="body">
%s
</div></div></body></html>
`

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mdhtml FILE.md")
		os.Exit(2)
	}
	src, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	var out bytes.Buffer
	if err := md.Convert(src, &out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf(page, out.String())
}
