package appset

// wildmatch matches text against a glob pattern as git's wildmatch does without
// WM_PATHNAME: '*' (and '**') matches any run of characters, '/' included; '?' any
// one character; '[...]' a class ('!' or '^' negates; ranges; [:alpha:] and the
// other POSIX classes); '\' quotes the next character. It works on bytes.
func wildmatch(pattern, text string) bool {
	px, tx := 0, 0
	// Where to resume after the last '*': its pattern position and the text
	// position it has consumed up to.
	starP, starT := -1, -1
	for {
		if px < len(pattern) {
			c := pattern[px]
			switch {
			case c == '*':
				for px < len(pattern) && pattern[px] == '*' {
					px++
				}
				starP, starT = px, tx
				continue
			case tx < len(text):
				ok, next, valid := matchOne(pattern, px, text[tx])
				if !valid {
					return false // a malformed class aborts the match
				}
				if ok {
					px, tx = next, tx+1
					continue
				}
			}
		} else if tx == len(text) {
			return true
		}
		if starP < 0 || starT >= len(text) {
			return false
		}
		starT++
		px, tx = starP, starT
	}
}

// matchOne matches one text byte against the pattern element at px: whether it
// matches, where the next element starts, and whether the element is well formed.
func matchOne(pattern string, px int, t byte) (bool, int, bool) {
	switch c := pattern[px]; c {
	case '?':
		return true, px + 1, true
	case '[':
		return matchClass(pattern, px, t)
	case '\\':
		if px+1 >= len(pattern) {
			return false, px + 1, true
		}
		return pattern[px+1] == t, px + 2, true
	default:
		return c == t, px + 1, true
	}
}

// matchClass matches t against the class starting at pattern[px] == '['.
func matchClass(pattern string, px int, t byte) (bool, int, bool) {
	at := func(i int) byte {
		if i < len(pattern) {
			return pattern[i]
		}
		return 0
	}
	p := px + 1
	c := at(p)
	if c == '^' {
		c = '!'
	}
	negated := c == '!'
	if negated {
		p++
		c = at(p)
	}
	var prev byte
	matched := false
	for {
		if c == 0 {
			return false, p, false
		}
		switch {
		case c == '\\':
			p++
			c = at(p)
			if c == 0 {
				return false, p, false
			}
			if t == c {
				matched = true
			}
		case c == '-' && prev != 0 && at(p+1) != 0 && at(p+1) != ']':
			p++
			c = at(p)
			if c == '\\' {
				p++
				c = at(p)
				if c == 0 {
					return false, p, false
				}
			}
			if t <= c && t >= prev {
				matched = true
			}
			c = 0
		case c == '[' && at(p+1) == ':':
			s := p + 2
			e := s
			for at(e) != 0 && at(e) != ']' {
				e++
			}
			if at(e) == 0 {
				return false, e, false
			}
			if e-s-1 < 0 || pattern[e-1] != ':' {
				// No ":]": a literal '['.
				if t == '[' {
					matched = true
				}
				break
			}
			ok, known := posixClass(pattern[s:e-1], t)
			if !known {
				return false, e, false
			}
			if ok {
				matched = true
			}
			p = e
			c = 0
		default:
			if t == c {
				matched = true
			}
		}
		prev = c
		p++
		c = at(p)
		if c == ']' {
			break
		}
	}
	return matched != negated, p + 1, true
}

// posixClass matches t against a [:name:] class, C locale.
func posixClass(name string, t byte) (match, known bool) {
	isUpper := t >= 'A' && t <= 'Z'
	isLower := t >= 'a' && t <= 'z'
	isDigit := t >= '0' && t <= '9'
	isAlpha := isUpper || isLower
	isPunct := t >= 0x21 && t <= 0x7e && !isAlpha && !isDigit
	switch name {
	case "alnum":
		return isAlpha || isDigit, true
	case "alpha":
		return isAlpha, true
	case "blank":
		return t == ' ' || t == '\t', true
	case "cntrl":
		return t < 0x20 || t == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return t >= 0x21 && t <= 0x7e, true
	case "lower":
		return isLower, true
	case "print":
		return t >= 0x20 && t <= 0x7e, true
	case "punct":
		return isPunct, true
	case "space":
		return t == ' ' || (t >= '\t' && t <= '\r'), true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (t >= 'a' && t <= 'f') || (t >= 'A' && t <= 'F'), true
	}
	return false, false
}
