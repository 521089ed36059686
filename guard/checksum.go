package guard

import (
	"hash/crc32"
	"math"
)

// The validators below take ASCII digits (and letters where the format has
// them) with separators already removed.

// luhn reports whether the digits pass the Luhn mod 10 check.
func luhn(d []byte) bool {
	sum, dbl := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if dbl {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		dbl = !dbl
	}
	return sum%10 == 0
}

func num(d []byte) int {
	n := 0
	for _, c := range d {
		n = n*10 + int(c-'0')
	}
	return n
}

// validCard checks length, issuer range (IIN) and Luhn.
func validCard(d []byte) bool {
	n := len(d)
	if n < 13 || n > 19 || !luhn(d) || allSame(d) {
		return false
	}
	p2, p3, p4, p6 := num(d[:2]), num(d[:3]), num(d[:4]), num(d[:6])
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case 51 <= p2 && p2 <= 55, 2221 <= p4 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // American Express
		return n == 15
	case p4 == 6011, p2 == 65, 644 <= p3 && p3 <= 649, 622126 <= p6 && p6 <= 622925: // Discover
		return n >= 16
	case 3528 <= p4 && p4 <= 3589: // JCB
		return n >= 16
	case 300 <= p3 && p3 <= 305, p2 == 36, p2 == 38, p2 == 39: // Diners Club
		return n >= 14
	case p2 == 62: // UnionPay
		return n >= 16
	case p2 == 50, 56 <= p2 && p2 <= 58, p2 == 67, p2 == 63: // Maestro
		return n >= 12
	case p4 == 2200 || p4 == 2201 || p4 == 2202 || p4 == 2203 || p4 == 2204: // Mir
		return n == 16
	}
	return false
}

func allSame(d []byte) bool {
	for _, c := range d {
		if c != d[0] {
			return false
		}
	}
	return true
}

// validSSN checks a US Social Security number: area not 000, 666 or
// 900-999; group not 00; serial not 0000.
func validSSN(d []byte) bool {
	if len(d) != 9 {
		return false
	}
	area, group, serial := num(d[:3]), num(d[3:5]), num(d[5:])
	if area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0 {
		return false
	}
	// Numbers published in advertising and never issued.
	return !(area == 78 && group == 5 && serial == 1120) && !(area == 219 && group == 9 && serial == 9999)
}

// validNHS checks a UK NHS number (mod 11, weights 10..2).
func validNHS(d []byte) bool {
	if len(d) != 10 || allSame(d) {
		return false
	}
	sum := 0
	for i := 0; i < 9; i++ {
		sum += int(d[i]-'0') * (10 - i)
	}
	check := 11 - sum%11
	if check == 11 {
		check = 0
	}
	return check != 10 && check == int(d[9]-'0')
}

// validPESEL checks a Polish PESEL: weights 1,3,7,9 and a real birth date.
func validPESEL(d []byte) bool {
	if len(d) != 11 || allSame(d) {
		return false
	}
	w := [10]int{1, 3, 7, 9, 1, 3, 7, 9, 1, 3}
	sum := 0
	for i := 0; i < 10; i++ {
		sum += int(d[i]-'0') * w[i]
	}
	if (10-sum%10)%10 != int(d[10]-'0') {
		return false
	}
	mm, dd := num(d[2:4]), num(d[4:6])
	month := mm % 20
	return mm/20 <= 4 && 1 <= month && month <= 12 && 1 <= dd && dd <= 31
}

var (
	verhoeffD = [10][10]byte{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5},
		{2, 3, 4, 0, 1, 7, 8, 9, 5, 6}, {3, 4, 0, 1, 2, 8, 9, 5, 6, 7},
		{4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
		{6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3},
		{8, 7, 6, 5, 9, 3, 2, 1, 0, 4}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
	}
	verhoeffP = [8][10]byte{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4},
		{5, 8, 0, 3, 7, 9, 6, 1, 4, 2}, {8, 9, 1, 6, 0, 4, 3, 5, 2, 7},
		{9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
		{2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8},
	}
)

// validAadhaar checks an Indian Aadhaar number: 12 digits, not starting
// with 0 or 1, Verhoeff check digit.
func validAadhaar(d []byte) bool {
	if len(d) != 12 || d[0] < '2' || allSame(d) {
		return false
	}
	c := byte(0)
	for i := 0; i < 12; i++ {
		c = verhoeffD[c][verhoeffP[i%8][d[11-i]-'0']]
	}
	return c == 0
}

const nifLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// validNIF checks a Spanish DNI/NIF (8 digits and a letter) or NIE (X, Y
// or Z, 7 digits and a letter). s is upper case without separators.
func validNIF(s []byte) bool {
	if len(s) != 9 {
		return false
	}
	n := 0
	switch s[0] {
	case 'X':
		n = 0
	case 'Y':
		n = 1
	case 'Z':
		n = 2
	default:
		if !isDigit(s[0]) {
			return false
		}
		n = int(s[0] - '0')
	}
	for _, c := range s[1:8] {
		if !isDigit(c) {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return nifLetters[n%23] == s[8]
}

// validCodiceFiscale checks an Italian fiscal code: 16 characters in the
// pattern LLLLLLDDLDDLDDDL (digits may be replaced by the omocodia letters)
// and the check character.
func validCodiceFiscale(s []byte) bool {
	if len(s) != 16 {
		return false
	}
	const omocodia = "LMNPQRSTUV"
	for i, c := range s[:15] {
		switch i {
		case 0, 1, 2, 3, 4, 5, 8, 11:
			if !isUpper(c) {
				return false
			}
		default:
			if !isDigit(c) && !contains(omocodia, c) {
				return false
			}
		}
	}
	if !isUpper(s[15]) || !contains("ABCDEHLMPRST", s[8]) {
		return false
	}
	odd := [36]int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}
	sum := 0
	for i, c := range s[:15] {
		v := 0
		if isDigit(c) {
			v = int(c - '0')
		} else {
			v = int(c-'A') + 10
		}
		if i%2 == 0 { // 1st, 3rd, ... (odd positions, 1-based)
			sum += odd[v]
		} else if isDigit(c) {
			sum += int(c - '0')
		} else {
			sum += int(c - 'A')
		}
	}
	return s[15] == byte('A'+sum%26)
}

// ibanLengths is the registered IBAN length per country.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
	"JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
	"MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
	"NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
	"SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// validIBAN checks the country length table and the ISO 7064 mod 97-10
// check. s is upper case without separators.
func validIBAN(s []byte) bool {
	if len(s) < 15 || ibanLengths[string(s[:2])] != len(s) || !isDigit(s[2]) || !isDigit(s[3]) {
		return false
	}
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[(i+4)%len(s)]
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case isUpper(c):
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// mod97 returns the number in d mod 97.
func mod97(d []byte) int {
	r := 0
	for _, c := range d {
		r = (r*10 + int(c-'0')) % 97
	}
	return r
}

// mod1110 is ISO 7064 MOD 11,10 (German and Croatian VAT numbers).
func mod1110(d []byte) bool {
	p := 10
	for _, c := range d[:len(d)-1] {
		s := (int(c-'0') + p) % 10
		if s == 0 {
			s = 10
		}
		p = (2 * s) % 11
	}
	check := 11 - p
	if check == 10 {
		check = 0
	}
	return check == int(d[len(d)-1]-'0')
}

func weighted(d []byte, w []int) int {
	s := 0
	for i, x := range w {
		s += int(d[i]-'0') * x
	}
	return s
}

// vatCheck validates the body of an EU VAT number for the countries whose
// check digits are public. known is false for countries checked by format
// alone; those need a context word to be reported.
func vatCheck(cc string, body []byte) (ok, known bool) {
	digits := allDigits(body)
	switch cc {
	case "BE":
		return digits && len(body) == 10 && (body[0] == '0' || body[0] == '1') && 97-mod97(body[:8]) == num(body[8:]), true
	case "DE":
		return digits && len(body) == 9 && body[0] != '0' && mod1110(body), true
	case "HR":
		return digits && len(body) == 11 && mod1110(body), true
	case "DK":
		return digits && len(body) == 8 && body[0] != '0' && weighted(body, []int{2, 7, 6, 5, 4, 3, 2, 1})%11 == 0, true
	case "FI":
		if !digits || len(body) != 8 {
			return false, true
		}
		c := 11 - weighted(body, []int{7, 9, 10, 5, 8, 4, 2})%11
		if c == 11 {
			c = 0
		}
		return c != 10 && c == int(body[7]-'0'), true
	case "FR":
		if len(body) != 11 || !allDigits(body[2:]) || !allDigits(body[:2]) {
			return false, true
		}
		return num(body[:2]) == (12+3*(num(body[2:])%97))%97, true
	case "IT":
		return digits && len(body) == 11 && luhn(body) && !allSame(body[:7]), true
	case "LU":
		return digits && len(body) == 8 && num(body[:6])%89 == num(body[6:]), true
	case "NL":
		if len(body) != 12 || body[9] != 'B' || !allDigits(body[:9]) || !allDigits(body[10:]) {
			return false, true
		}
		s := weighted(body, []int{9, 8, 7, 6, 5, 4, 3, 2})
		if (s-int(body[8]-'0'))%11 == 0 {
			return true, true
		}
		// Sole traders since 2020: mod 97 over "NL" + the number.
		r := (2321 % 97) // "NL" as 23 21
		for _, c := range body {
			if isDigit(c) {
				r = (r*10 + int(c-'0')) % 97
			} else {
				r = (r*100 + int(c-'A') + 10) % 97
			}
		}
		return r == 1, true
	case "PL":
		if !digits || len(body) != 10 {
			return false, true
		}
		c := weighted(body, []int{6, 5, 7, 2, 3, 4, 5, 6, 7}) % 11
		return c != 10 && c == int(body[9]-'0'), true
	case "PT":
		if !digits || len(body) != 9 {
			return false, true
		}
		c := 11 - weighted(body, []int{9, 8, 7, 6, 5, 4, 3, 2})%11
		if c >= 10 {
			c = 0
		}
		return c == int(body[8]-'0'), true
	case "SK":
		return digits && len(body) == 10 && body[0] != '0' && mod97(body)%11 == 0, true
	case "AT":
		return len(body) == 9 && body[0] == 'U' && allDigits(body[1:]), false
	case "BG":
		return digits && (len(body) == 9 || len(body) == 10), false
	case "CY":
		return len(body) == 9 && allDigits(body[:8]) && isUpper(body[8]), false
	case "CZ":
		return digits && len(body) >= 8 && len(body) <= 10, false
	case "EE", "EL":
		return digits && len(body) == 9, false
	case "ES":
		return len(body) == 9 && allDigits(body[1:8]), false
	case "HU", "MT", "SI":
		return digits && len(body) == 8, false
	case "IE":
		return len(body) >= 8 && len(body) <= 9 && isDigit(body[0]), false
	case "LT":
		return digits && (len(body) == 9 || len(body) == 12), false
	case "LV":
		return digits && len(body) == 11, false
	case "RO":
		return digits && len(body) >= 2 && len(body) <= 10, false
	case "SE":
		return digits && len(body) == 12 && body[10] == '0' && body[11] == '1', false
	case "XI":
		return digits && (len(body) == 9 || len(body) == 12), false
	}
	return false, false
}

// githubChecksum checks the CRC32 that GitHub's token formats carry in
// their last 6 characters: base62 of the CRC32 (IEEE) of the 30 random
// characters between the prefix and the checksum.
func githubChecksum(body string) bool {
	if len(body) != 36 {
		return false
	}
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var want uint64
	for i := 30; i < 36; i++ {
		k := -1
		for j := 0; j < len(alphabet); j++ {
			if alphabet[j] == body[i] {
				k = j
				break
			}
		}
		if k < 0 {
			return false
		}
		want = want*62 + uint64(k)
	}
	return want == uint64(crc32.ChecksumIEEE([]byte(body[:30])))
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if len(s) == 0 {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return len(b) > 0
}

func contains(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}
