# Sourced by the Action's steps (run.sh, install.sh): what they print to the step's log
# from elsewhere (an input, a ref, git's or install.sh's messages), made safe to print.
# The runner takes a line for a workflow command when, after leading white space, it
# starts with "::", or when "##[" is anywhere in it (internal/steplog says how drift
# itself neutralises its output, and why with a zero-width space).

# zwsp is U+200B ZERO WIDTH SPACE in UTF-8, written as bytes so that no locale changes it.
zwsp=$'\xe2\x80\x8b'

# command_data prints $1 escaped as the message of a workflow command ("::error::...")
# the runner unescapes: %, CR and LF, so it cannot end the command or start a line.
command_data() {
  local s="${1//'%'/%25}"
  s="${s//$'\r'/%0D}"
  printf '%s' "${s//$'\n'/%0A}"
}

# log_text prints $1, text from elsewhere, as lines no runner takes for a command: each
# line (ended by LF, CR or CRLF, as the runner splits them) starts with a zero-width
# space, which is not white space to the runner, so no line starts with "::"; and
# every "##[" has one between its two '#'.
log_text() {
  local s="${1//'##['/#${zwsp}#[}"
  s="${s//$'\r\n'/$'\n'}"
  s="${s//$'\r'/$'\r'${zwsp}}"
  printf '%s\n' "${zwsp}${s//$'\n'/$'\n'${zwsp}}"
}
