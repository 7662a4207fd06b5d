// Package azure speaks Azure DevOps' REST API (Services and Server, through
// Microsoft's azure-devops-go-api) for internal/publish: the pull request's drift
// comment thread, a pull request status (a commit status outside a pull request),
// the drift work item in Azure Boards, what an Azure Pipelines job's variables say
// about where they go, and how to keep text inert in the agent's log. Kind is what
// internal/publish registers.
package azure
