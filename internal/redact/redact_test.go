package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// Secrets in these tests are assembled from pieces at run time so that no
// token-shaped literal sits in the source, where secret scanners would flag
// it. None of them is a real credential.
var (
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE" // AWS's documented example
	awsTempKeyID = "ASIA" + "Z3MHFQ2EXAMPLE42"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	ghPAT        = "gh" + "p_" + "R2d2C3p0L8k9J7h6G5f4D3s2A1q0W9e8R7t6"
	ghFineGrain  = "github" + "_pat_" + "11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
	ghInstall    = "gh" + "s_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	glPAT        = "gl" + "pat-" + "xZ9-yW8_vU7tS6rQ5pO4"
	logbookToken = "lb" + "k_" + "Bz0gPW23WA-0L4UYTMPQWH14AwLsxjtG_tSjtDzawVI"
	slackBot     = "xox" + "b-" + "2147483647-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackHook    = "https://hooks.slack.com/services/" + "T0000AAAA/B0000BBBB/" + "XXXXXXXXXXXXXXXXXXXXXXXX"
	openAIProj   = "sk-" + "proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7jKl0nOp3rSt6vWx9z"
	openAILegacy = "sk-" + "T3BlbkFJ" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9"
	anthropicKey = "sk-" + "ant-api03-" + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3Bx-AAAA"
	jwt          = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + "." +
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c" // jwt.io's example token
	pemKey = "-----BEGIN RSA " + "PRIVATE KEY-----\n" +
		"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" +
		"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n" +
		"-----END RSA " + "PRIVATE KEY-----"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// One realistic example (or more) per kind.
		{"aws key id", "aws_access_key_id = " + awsKeyID, "aws_access_key_id = [REDACTED:aws_access_key_id]"},
		{"aws temporary key id in json text", `{"AccessKeyId": "` + awsTempKeyID + `"}`, `{"AccessKeyId": "[REDACTED:aws_access_key_id]"}`},
		{"aws secret", "aws_secret_access_key=" + awsSecret + "\n", "aws_secret_access_key=[REDACTED:aws_secret_access_key]\n"},
		{"aws secret in env", "export AWS_SECRET_ACCESS_KEY=" + awsSecret, "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_access_key]"},
		{"github pat", "export GITHUB_TOKEN=" + ghPAT, "export GITHUB_TOKEN=[REDACTED:github_token]"},
		{"github fine-grained", "token: " + ghFineGrain, "token: [REDACTED:github_token]"},
		{"github in clone url", "git clone https://x-access-token:" + ghInstall + "@github.com/org/repo.git",
			"git clone https://x-access-token:[REDACTED:github_token]@github.com/org/repo.git"},
		{"gitlab", "curl --header 'PRIVATE-TOKEN: " + glPAT + "' https://gitlab.com/api/v4/projects",
			"curl --header 'PRIVATE-TOKEN: [REDACTED:gitlab_token]' https://gitlab.com/api/v4/projects"},
		{"logbook token", "export LOGBOOK_TOKEN " + logbookToken + " && logbook sessions list",
			"export LOGBOOK_TOKEN [REDACTED:logbook_token] && logbook sessions list"},
		{"slack token", "SLACK_BOT=" + slackBot + " node bot.js", "SLACK_BOT=[REDACTED:slack_token] node bot.js"},
		{"slack webhook", "curl -X POST " + slackHook + " -d @msg.json",
			"curl -X POST https://hooks.slack.com/services/[REDACTED:slack_webhook] -d @msg.json"},
		{"openai project key", "OPENAI_API_KEY=" + openAIProj, "OPENAI_API_KEY=[REDACTED:openai_key]"},
		{"openai legacy key", `client = OpenAI(api_key="` + openAILegacy + `")`, `client = OpenAI(api_key="[REDACTED:openai_key]")`},
		{"anthropic key", "x-api-key: " + anthropicKey + "\n", "x-api-key: [REDACTED:anthropic_key]\n"},
		{"jwt in cookie", "Cookie: session=" + jwt + "; Path=/", "Cookie: session=[REDACTED:jwt]; Path=/"},
		{"pem block", "cat id_rsa\n" + pemKey + "\ndone", "cat id_rsa\n[REDACTED:private_key]\ndone"},
		{"pem block cut short", "key:\n" + pemKey[:120], "key:\n[REDACTED:private_key]"},
		{"postgres url", "DATABASE_URL=postgres://app:s3cr3t-P4ss@db.internal:5432/app?sslmode=disable",
			"DATABASE_URL=postgres://app:[REDACTED:password]@db.internal:5432/app?sslmode=disable"},
		{"redis url without user", "redis://:hunter2@cache:6379/0", "redis://:[REDACTED:password]@cache:6379/0"},
		{"query string", "GET https://api.example.com/v1/items?api_key=abc123def456&limit=10",
			"GET https://api.example.com/v1/items?api_key=[REDACTED:secret]&limit=10"},
		{"token in url", "curl 'https://hooks.example.io/cb?token=9f8e7d6c5b4a'", "curl 'https://hooks.example.io/cb?token=[REDACTED:secret]'"},
		{"connection string", "Server=db;Database=app;User Id=sa;Password=Pa55w0rd!;Encrypt=true",
			"Server=db;Database=app;User Id=sa;Password=[REDACTED:password];Encrypt=true"},
		{"password flag", "mysql -u root --password=hunter2 app", "mysql -u root --password=[REDACTED:password] app"},
		{"quoted value", `DB_PASSWORD="correct horse battery"`, `DB_PASSWORD=[REDACTED:password]`},
		{"secret assignment", "client_secret = 'e2a9b1c7d4'", "client_secret = [REDACTED:secret]"},
		{"json text", `{"user": "ci", "password": "Tr0ub4dor&3"}`, `{"user": "ci", "password": "[REDACTED:password]"}`},
		{"bearer header", `curl -H "Authorization: Bearer abcdef0123456789abcdef01" https://api.example.com`,
			`curl -H "Authorization: Bearer [REDACTED:authorization]" https://api.example.com`},
		{"basic header", "Authorization: Basic dXNlcjpwYXNzd29yZA==\r\n", "Authorization: Basic [REDACTED:authorization]\r\n"},
		{"bearer alone", "use bearer 0123456789abcdefABCDEF0123 for now", "use bearer [REDACTED:authorization] for now"},

		// Text that must survive untouched.
		{"git sha", "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main)", ""},
		{"uuid", "session 1af7fc5e-8455-4414-9ccd-011d40f70b2a resumed", ""},
		{"sk in words", "skip task-sk-1, ask-for-it later; risk-assessment-for-the-quarterly-review", ""},
		{"sk- words without digits", "pip install sk-learn-compatible-estimators-for-pipelines", ""},
		{"base64 image", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", ""},
		{"jwt header alone", "the header eyJhbGciOiJIUzI1NiJ9 decodes to {\"alg\":\"HS256\"}", ""},
		{"token counts", "max_tokens=4096 input_tokens: 35 output_tokens=120", ""},
		{"placeholders", `Authorization: Bearer $TOKEN; password=${DB_PASSWORD}; postgres://app:$PGPASSWORD@db/app; api_key=<your-key>`, ""},
		{"port and at-sign", "https://example.com:8443/releases@v2 and user@example.com", ""},
		{"prefix in prose", "keys starting with AKIA are long-term, ASIA temporary", ""},
		{"working directory", "PWD=/home/dev/project OLDPWD=/home/dev", ""},
		{"other assignments", "keyboard=us bypass=true passes=3", ""},
		{"code", "token := os.Getenv(\"GITHUB_TOKEN\")\npassword = request.form.get('password')", ""},
		{"already redacted", "token=[REDACTED:secret] and Bearer [REDACTED:authorization]", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got := String(tt.in)
			if got != want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, want)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: String(String(x)) = %q", again)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"strings anywhere",
			`{"command":"curl -H 'Authorization: Bearer abcdef0123456789abcdef01' https://x.io","args":["--token=` + ghPAT + `",1]}`,
			`{"command":"curl -H 'Authorization: Bearer [REDACTED:authorization]' https://x.io","args":["--token=[REDACTED:github_token]",1]}`},
		{"values of secret-named members",
			`{"user":"ci","password":"hunter2","apiKey":"k-123","X-Api-Key":"abc","client_secret":"s","nested":{"refresh_token":"r1"},"Authorization":"Basic Zm9v"}`,
			`{"user":"ci","password":"[REDACTED:password]","apiKey":"[REDACTED:secret]","X-Api-Key":"[REDACTED:secret]","client_secret":"[REDACTED:secret]","nested":{"refresh_token":"[REDACTED:secret]"},"Authorization":"[REDACTED:authorization]"}`},
		{"secret in a member name", `{"` + awsKeyID + `":true}`, `{"[REDACTED:aws_access_key_id]":true}`},
		{"numbers, order and non-strings kept", `{"z":1.50,"a":12345678901234567890,"password":null,"token":7,"max_tokens":"4096","b":[true,false,{}],"c":[]}`, ""},
		{"placeholders kept", `{"password":"","token":"${TOKEN}","api_key":"<your key>"}`, ""},
		{"html characters not escaped", `{"cmd":"a && b <c> 'sk-ant'"}`, ""},
		{"escaped secret", `{"k":"\u0073k-ant-api03-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"}`, `{"k":"[REDACTED:anthropic_key]"}`},
		{"top-level string", `"export GITHUB_TOKEN=` + ghPAT + `"`, `"export GITHUB_TOKEN=[REDACTED:github_token]"`},
		{"invalid json becomes a string", `{"password": "hunter2"`, `"{\"password\": \"[REDACTED:password]\""`},
		{"not json at all", `password=hunter2 and more`, `"password=[REDACTED:password] and more"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got := JSON(json.RawMessage(tt.in))
			if string(got) != want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, want)
			}
			if !json.Valid(got) {
				t.Errorf("result is not valid JSON: %s", got)
			}
			if again := JSON(got); string(again) != string(got) {
				t.Errorf("not idempotent: JSON(JSON(x)) = %s", again)
			}
		})
	}
	if got := JSON(nil); got != nil {
		t.Errorf("JSON(nil) = %q, want nil", got)
	}
}

func TestJSONLeavesCleanPayloadsAlone(t *testing.T) {
	raw := json.RawMessage(`{"file_path":"/repo/main.go", "old_string":"a",  "new_string":"b"}`)
	got := JSON(raw)
	if &got[0] != &raw[0] {
		t.Errorf("a payload with no secret marker was rewritten: %s", got)
	}
}

// secretMakers build one secret of each kind from arbitrary bytes, mapped
// onto the kind's alphabet; the returned core is the part that must never
// survive redaction.
var secretMakers = []func(body string) (secret, core string){
	func(b string) (string, string) { c := pick(b, upperDigits, 16); return "AKIA" + c, c },
	func(b string) (string, string) { c := pick(b, alnum, 36); return "ghp_" + c, c },
	func(b string) (string, string) { c := pick(b, alnum+"_", 60); return "github_pat_" + c, c },
	func(b string) (string, string) { c := pick(b, alnum+"-_", 20); return "glpat-" + c, c },
	func(b string) (string, string) { c := pick(b, alnum+"-", 40); return "xoxp-" + c, c },
	func(b string) (string, string) { c := pick(b, alnum+"-_", 48); return "sk-ant-api03-" + c, c },
	func(b string) (string, string) { c := pick(b, alnum+"-_", 48); return "sk-proj-" + c, c },
	func(b string) (string, string) {
		c := pick(b, alnum+"-_", 24)
		return "eyJ" + c + ".eyJ" + c + "." + c, c
	},
	func(b string) (string, string) {
		c := pick(b, alnum+"+/", 64)
		return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + c + "\n-----END OPENSSH PRIVATE KEY-----", c
	},
	func(b string) (string, string) {
		c := pick(b, alnum, 12)
		return "mysql://root:" + c + "@db:3306/app", c
	},
	func(b string) (string, string) { c := pick(b, alnum+"+/", 40); return "aws_secret_access_key=" + c, c },
	func(b string) (string, string) { c := pick(b, alnum+"._-", 32); return "Authorization: Bearer " + c, c },
	func(b string) (string, string) { c := pick(b, alnum+"!#%+", 12); return "password=" + c, c },
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alnum       = "abcdefghijklmnopqrstuvwxyz" + upperDigits
)

// pick maps body onto alphabet, n characters long; the first is always a
// digit so that a core can neither be a placeholder nor a word.
func pick(body, alphabet string, n int) string {
	if body == "" {
		body = "0"
	}
	out := make([]byte, n)
	out[0] = "0123456789"[body[0]%10]
	for i := 1; i < n; i++ {
		out[i] = alphabet[int(body[i%len(body)])%len(alphabet)]
	}
	return string(out)
}

func TestSecretMakers(t *testing.T) {
	for i, makeSecret := range secretMakers {
		secret, core := makeSecret("seed")
		if got := String(secret); strings.Contains(got, core) || !strings.Contains(got, "[REDACTED:") {
			t.Errorf("maker %d: String(%q) = %q", i, secret, got)
		}
	}
}

// FuzzString checks that String never panics, is idempotent, agrees with
// JSON on a JSON string, and never lets through the secret when the input is
// exactly a secret built from the fuzz input. Seeds are in
// testdata/fuzz/FuzzString.
func FuzzString(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string, kind uint8) {
		once := String(s)
		if twice := String(once); twice != once {
			t.Fatalf("not idempotent:\n in %q\nonce %q\ntwice %q", s, once, twice)
		}
		// The quick check that lets short text through untouched agrees
		// with running every rule.
		p := &pass{}
		if all := p.scrub(p.runRules(s)); all != once {
			t.Fatalf("String(%q) = %q, but the rules give %q", s, once, all)
		}
		tagged := Tagged(s, testTag)
		if again := Tagged(tagged, testTag); again != tagged {
			t.Fatalf("Tagged not idempotent:\n in %q\nonce %q\ntwice %q", s, tagged, again)
		}
		// A JSON string holding s (invalid UTF-8 becomes U+FFFD) is redacted
		// like the text it holds.
		quoted, _ := json.Marshal(s)
		var text, back string
		_ = json.Unmarshal(quoted, &text)
		if got := JSON(quoted); json.Unmarshal(got, &back) != nil || back != String(text) {
			t.Fatalf("JSON(%s) = %s, want the JSON string of %q", quoted, got, String(text))
		}
		if got := JSON(json.RawMessage(s)); strings.TrimSpace(s) != "" && !json.Valid(got) {
			t.Fatalf("JSON(%q) = %q is not valid JSON", s, got)
		}

		secret, core := secretMakers[int(kind)%len(secretMakers)](s)
		if got := String(secret); strings.Contains(got, core) {
			t.Fatalf("String(%q) = %q still holds %q", secret, got, core)
		}
		if got := Tagged(secret, testTag); strings.Contains(got, core) {
			t.Fatalf("Tagged(%q) = %q still holds %q", secret, got, core)
		}
	})
}

// testTag names a secret by its SHA-256, cut to 16 hex digits as logbook's
// keyed hash is.
func testTag(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:8])
}

func TestTagged(t *testing.T) {
	for i, makeSecret := range secretMakers {
		one, core := makeSecret("seed")
		other, _ := makeSecret("other seed")
		id := "run/" + one + " x"
		got := Tagged(id, testTag)
		if strings.Contains(got, core) || !strings.HasPrefix(got, "run/") || !strings.Contains(got, "[REDACTED:") {
			t.Errorf("maker %d: Tagged(%q) = %q", i, id, got)
		}
		if again := Tagged(got, testTag); again != got {
			t.Errorf("maker %d: not idempotent: %q then %q", i, got, again)
		}
		if Tagged(id, testTag) != got {
			t.Errorf("maker %d: the same identifier redacts two ways", i)
		}
		if otherID := "run/" + other + " x"; Tagged(otherID, testTag) == got {
			t.Errorf("maker %d: two identifiers with different secrets redact alike: %q", i, got)
		}
		if plain := String(id); Tagged(id, testTag) == plain {
			t.Errorf("maker %d: Tagged gave no tag: %q", i, plain)
		}
	}
	if got, want := Tagged("export GITHUB_TOKEN="+ghPAT, testTag), "export GITHUB_TOKEN=[REDACTED:github_token:"+testTag(ghPAT)+"]"; got != want {
		t.Errorf("Tagged = %q, want %q", got, want)
	}
}

func TestSplitSecrets(t *testing.T) {
	body := strings.Split(pemKey, "\n")[1]
	// A shell parser took each line of an unquoted key for a command.
	got := string(JSON(json.RawMessage(`{"command":` + quote(pemKey) + `,"reasons":[{"command":` + quote(body) + `}]}`)))
	if strings.Contains(got, body) || !strings.Contains(got, `"reasons":[{"command":"[REDACTED:private_key]"}]`) {
		t.Errorf("a line of a key found elsewhere in the value was kept: %s", got)
	}
	// A key repeated where nothing marks it as one.
	text := "export GITHUB_TOKEN=" + ghPAT + "\nthen curl -u x" + ghPAT + " https://api.github.com"
	if got := String(text); strings.Contains(got, ghPAT) {
		t.Errorf("String kept a repeat of a key it found: %q", got)
	}
	if got := Tagged(text, testTag); strings.Count(got, "[REDACTED:github_token:"+testTag(ghPAT)+"]") != 2 {
		t.Errorf("Tagged did not tag both occurrences alike: %q", got)
	}
	// Short lines are left alone: they could be words.
	if got := String("password=hunter2 and hunter2"); got != "password=[REDACTED:password] and hunter2" {
		t.Errorf("a short secret's repeat: %q", got)
	}
}

func quote(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}
