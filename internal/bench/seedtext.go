package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// seedText writes the text of seeded entries: sentences of common English
// words drawn with Zipf's law (a few words in most entries, most words in
// few), identifiers, paths, shell commands, test and error output, and
// now and then Chinese or Japanese, so that a search over the seed meets
// words as common and as rare as in real transcripts. It draws from its
// own source, so the seed's sessions are the same with or without it.
type seedText struct {
	rng   *rand.Rand
	words *rand.Zipf
	cjk   *rand.Zipf
}

func newSeedText() *seedText {
	rng := rand.New(rand.NewPCG(3, 4))
	return &seedText{
		rng:   rng,
		words: rand.NewZipf(rng, 1.1, 2, uint64(len(seedWords)-1)),
		cjk:   rand.NewZipf(rng, 1.2, 1, uint64(len(seedCJKWords)-1)),
	}
}

// SeedWords are the seed's words, most common first; a read benchmark
// searches words of several ranks.
var seedWords = strings.Fields(`the to and a of is in it that for this test I on with be not we run
	file now as will at check it's fails error from can see let config by use should need have an if
	build are so function but change update the was then first add value more one which code path
	fix time looks output log all new server request call return error's read after before failing
	database query connection timeout retry session token user when missing into still works type
	module cache worker queue message handler client response status field line again there also
	data only because loop issue make version upgrade release branch commit merge review step next
	lock table index schema migration rollback deploy cluster node pod container image volume host
	network port route proxy certificate expired permission denied allowed policy secret key value
	parse format encode decode buffer stream channel goroutine mutex race deadlock panic recover
	stack trace frame pointer nil empty null undefined string number integer float boolean array
	list map slice struct interface method argument parameter flag option default override template
	render page button form input dialog modal layout style theme color font icon image asset bundle
	webpack vite babel eslint prettier typescript javascript golang python rust java kotlin swift
	postgres sqlite redis kafka rabbitmq elasticsearch prometheus grafana terraform ansible helm
	kubernetes docker nginx caddy systemd journald cron backup snapshot restore replica primary
	failover quorum latency throughput memory leak profile benchmark regression flaky intermittent
	reproduce bisect blame diff patch hunk conflict rebase squash cherry tag semver changelog notes
	invoice billing payment refund subscription customer account tenant organization team member
	invite onboarding signup login logout password reset email notification webhook callback event
	metric alert pager incident postmortem runbook oncall escalation severity priority backlog
	sprint estimate story epic milestone roadmap deadline blocker dependency vendor license audit
	compliance gdpr retention archive purge vacuum analyze reindex partition shard tenant replica
	zanzibar quokka marmalade heliotrope`)

// seedIdentifierParts make identifiers: a verb and one or two nouns.
var (
	seedVerbs = strings.Fields(`parse load save get set build make handle read write open close start stop
		run check validate render fetch send sync merge split find update delete create apply`)
	seedNouns = strings.Fields(`Config File Session Token User Request Response Handler Client Server Cache
		Queue Worker Message Event Entry Index Schema Table Query Row Column Stream Buffer Path Route
		Policy Claim Plan Step Task Agent Report Metric Invoice Payment Account Cluster Node Pod`)
	seedDirs = strings.Fields(`internal cmd pkg src api web store service auth billing worker ops deploy
		migrations config scripts tests docs handlers models views`)
	seedCJKWords = strings.Fields(`数据库 连接 失败 超时 重试 配置 文件 测试 部署 服务器 日志 错误 用户 权限 缓存
		索引 迁移 集群 节点 证书 过期 请求 响应 内存 泄漏 性能 回滚 版本 发布 构建
		テスト 失敗 データベース 接続 設定 ファイル デプロイ サーバー ログ エラー ユーザー 権限 キャッシュ
		移行 東京 大阪 確認 修正 更新 原因 調査 完了 します しました です ました`)
	seedErrors = []string{
		"dial tcp 10.0.%d.%d:5432: connect: connection refused",
		"open %s: no such file or directory",
		"panic: runtime error: index out of range [%d] with length %d",
		"context deadline exceeded after %ds",
		"permission denied while writing %s",
		"ERROR: duplicate key value violates unique constraint \"%s_pkey\"",
		"429 Too Many Requests: retry after %d seconds",
		"x509: certificate has expired or is not yet valid (host %s)",
	}
)

// word draws a word by its rank.
func (g *seedText) word() string { return seedWords[g.words.Uint64()] }

// identifier is a camelCase name, like parseConfigFile.
func (g *seedText) identifier() string {
	id := seedVerbs[g.rng.IntN(len(seedVerbs))] + seedNouns[g.rng.IntN(len(seedNouns))]
	if g.rng.IntN(3) == 0 {
		id += seedNouns[g.rng.IntN(len(seedNouns))]
	}
	return id
}

// path is a source file's path, like internal/store/session_cache.go.
func (g *seedText) path() string {
	n := 1 + g.rng.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = seedDirs[g.rng.IntN(len(seedDirs))]
	}
	return strings.Join(parts, "/") + "/" + strings.ToLower(seedNouns[g.rng.IntN(len(seedNouns))]) + []string{".go", ".ts", ".py", ".sql"}[g.rng.IntN(4)]
}

// errorLine is an error message as tools print them.
func (g *seedText) errorLine() string {
	switch tmpl := seedErrors[g.rng.IntN(len(seedErrors))]; strings.Count(tmpl, "%") {
	case 2:
		return fmt.Sprintf(tmpl, g.rng.IntN(255), g.rng.IntN(255))
	default:
		if strings.Contains(tmpl, "%s") {
			return fmt.Sprintf(tmpl, g.path())
		}
		return fmt.Sprintf(tmpl, 1+g.rng.IntN(60))
	}
}

// message is what an assistant says: a sentence or two, one in thirty in
// Chinese or Japanese.
func (g *seedText) message() string {
	if g.rng.IntN(30) == 0 {
		var b strings.Builder
		for range 4 + g.rng.IntN(10) {
			b.WriteString(seedCJKWords[g.cjk.Uint64()])
		}
		return b.String() + "。"
	}
	var b strings.Builder
	for i := range 8 + g.rng.IntN(20) {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch r := g.rng.IntN(40); {
		case r == 0:
			b.WriteString(g.identifier())
		case r == 1:
			b.WriteString(g.path())
		case r == 2:
			b.WriteString(g.errorLine())
		default:
			b.WriteString(g.word())
		}
	}
	return b.String() + "."
}

// toolCall is the input of a shell command.
func (g *seedText) toolCall() json.RawMessage {
	var cmd string
	switch g.rng.IntN(4) {
	case 0:
		path, name := g.path(), g.identifier()
		cmd = "go test ./" + path[:strings.LastIndexByte(path, '/')+1] + "... -run Test" + strings.ToUpper(name[:1]) + name[1:]
	case 1:
		cmd = "grep -rn " + g.identifier() + " " + seedDirs[g.rng.IntN(len(seedDirs))] + "/"
	case 2:
		cmd = "cat " + g.path()
	default:
		cmd = "kubectl logs deploy/" + strings.ToLower(seedNouns[g.rng.IntN(len(seedNouns))]) + " --since=" + fmt.Sprint(1+g.rng.IntN(48)) + "h"
	}
	raw, _ := json.Marshal(map[string]string{"command": cmd})
	return raw
}

// toolResult is a command's output: a test run that passed, or one that
// failed with an error.
func (g *seedText) toolResult() string {
	if g.rng.IntN(3) > 0 {
		return fmt.Sprintf("ok  \tgithub.com/acme/%s\t0.%03ds", strings.TrimSuffix(g.path(), ".go"), g.rng.IntN(1000))
	}
	name := g.identifier()
	return fmt.Sprintf("--- FAIL: Test%s%s (0.%02ds)\n    %s_test.go:%d: %s\nFAIL", strings.ToUpper(name[:1]), name[1:], g.rng.IntN(100),
		strings.ToLower(seedNouns[g.rng.IntN(len(seedNouns))]), 10+g.rng.IntN(400), g.errorLine())
}
