package engine_go

import "context"
import "errors"
import "github.com/tetratelabs/wazero"
import "github.com/tetratelabs/wazero/api"

import _ "embed"

//go:embed engine_go.wasm
var wasmFileEngineGo []byte

type EngineGoFactory struct {
	runtime wazero.Runtime
	module  wazero.CompiledModule
}

type Diagnostic struct {
	Severity string
	Line     uint32
	Column   uint32
	Message  string
}

type Progress struct {
	Completed  []string
	InProgress []string
	Remaining  []string
}

type LearningAdd struct {
	Reason string
	Text   string
}

type VerbatimAdd struct {
	Reason  string
	Label   string
	Snippet string
}

type ArchiveOp struct {
	Id     string
	Reason string
}

type LearningOps struct {
	Add     []LearningAdd
	Archive []ArchiveOp
}

type VerbatimOps struct {
	Add     []VerbatimAdd
	Archive []ArchiveOp
}

type Update struct {
	Progress  Progress
	Learnings LearningOps
	Verbatim  VerbatimOps
}

type ParseOutcome struct {
	Ok          bool
	Update      Update
	Diagnostics []Diagnostic
}

type Learning struct {
	Id            string
	Text          string
	Reason        string
	AddedAt       string
	ArchivedAt    string
	ArchiveReason string
}

type VerbatimEntry struct {
	Id            string
	Label         string
	Snippet       string
	Reason        string
	AddedAt       string
	ArchivedAt    string
	ArchiveReason string
}

type Snapshot struct {
	Progress     Progress
	Learnings    []Learning
	Verbatim     []VerbatimEntry
	NextLearning uint32
	NextVerbatim uint32
	Updates      uint32
}

type Applied struct {
	Seq      uint32
	Diff     string
	Added    []string
	Archived []string
	Ignored  []string
	Warnings []Diagnostic
	LogEntry string
	Overview string
	State    string
}

type ApplyOutcome struct {
	Ok          bool
	Applied     Applied
	Diagnostics []Diagnostic
}

type Message struct {
	Role    string
	Content string
}

type UpdateStep struct {
	Kind        string
	Applied     Applied
	Diagnostics []Diagnostic
}

type ToolCall struct {
	Id        string
	Name      string
	Arguments string
}

type ChatMessage struct {
	Role       string
	Content    string
	ToolCallId string
	ToolCalls  []ToolCall
}

type HistoryEntry struct {
	Seq     uint32
	Message ChatMessage
	Tokens  uint32
}

type Replacement struct {
	Replaces []uint32
	Message  ChatMessage
}

type Compaction struct {
	Replacements []Replacement
	Archive      string
	View         []HistoryEntry
	Messages     uint32
	TokensBefore uint32
	TokensAfter  uint32
	Notice       string
}

type CompactRequest struct {
	Target       uint32
	Strategy     uint32
	KeepRecent   uint32
	ArchiveTo    string
	ArchiveLines uint32
	NeverCompact []string
	MinFree      uint32
	Answered     bool
	Summary      string
	Keep         []uint32
}

type CompactStep struct {
	Kind       string
	Ask        []ChatMessage
	Compaction Compaction
	Error      string
}

type FallbackRequest struct {
	Used         uint32
	Threshold    uint32
	Goal         uint32
	KeepRecent   uint32
	ArchiveTo    string
	ArchiveLines uint32
	NeverCompact []string
	Keep         []uint32
}

type FallbackOutcome struct {
	Compacted  bool
	Compaction Compaction
}

type ContextRequest struct {
	SystemPrompt string
	AgentsMd     string
	Overview     string
	History      []ChatMessage
	ActiveTurn   uint32
	HistoryMode  uint32
	LastN        uint32
	OverviewPath string
	DetailPath   string
}

type ContextStats struct {
	TokensUsed           uint32
	TokensMax            uint32
	MessagesInHistory    uint32
	WorkingMemorySize    uint32
	RoundsSinceUpdate    uint32
	RemindAfterRounds    uint32
	StrongReminderTokens uint32
	CompactAt            uint32
	CompactionNotice     string
}

type BoardApplied struct {
	Revision uint32
	Event    string
}

type DocumentSection struct {
	Name string
	Body string
	Line uint32
}

func NewEngineGoFactory(
	ctx context.Context,
	config wazero.RuntimeConfig,
) (*EngineGoFactory, error) {
	runtime := wazero.NewRuntimeWithConfig(ctx, config)

	// Compiling the module takes a LONG time, so we want to do it once and hold
	// onto it with the Runtime
	module, err := runtime.CompileModule(ctx, wasmFileEngineGo)
	if err != nil {
		return nil, err
	}

	return &EngineGoFactory{runtime, module}, nil
}

func (f *EngineGoFactory) Instantiate(ctx context.Context) (*EngineGoInstance, error) {
	if module, err := f.runtime.InstantiateModule(ctx, f.module, wazero.NewModuleConfig()); err != nil {
		return nil, err
	} else {
		return &EngineGoInstance{module}, nil
	}
}

func (f *EngineGoFactory) Close(ctx context.Context) {
	f.runtime.Close(ctx)
}

type EngineGoInstance struct {
	module api.Module
}

// writeString will put a Go string into the Wasm memory following the Component
// Model calling convetions, such as allocating memory with the realloc function
func writeString(
	ctx context.Context,
	s string,
	memory api.Memory,
	realloc api.Function,
) (uint64, uint64, error) {
	if len(s) == 0 {
		return 1, 0, nil
	}

	results, err := realloc.Call(ctx, 0, 0, 1, uint64(len(s)))
	if err != nil {
		return 1, 0, err
	}
	ptr := results[0]
	ok := memory.Write(uint32(ptr), []byte(s))
	if !ok {
		return 1, 0, err
	}
	return uint64(ptr), uint64(len(s)), nil
}

func (i *EngineGoInstance) Close(ctx context.Context) error {
	if err := i.module.Close(ctx); err != nil {
		return err
	}

	return nil
}

func (i *EngineGoInstance) Parse(
	ctx context.Context,
	text string,
) ParseOutcome {
	arg0 := text
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}
	raw1, err1 := i.module.ExportedFunction("parse").Call(ctx, uint64(ptr0), uint64(len0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_parse").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read byte from memory"))
	}
	value3 := value2 != 0
	ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok4 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len5, ok5 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok5 {
		panic(errors.New("failed to read length from memory"))
	}
	base9 := ptr4
	len9 := len5
	result9 := make([]string, len9)
	for idx9 := uint32(0); idx9 < len9; idx9++ {
		base := base9 + idx9*8
		ptr6, ok6 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok6 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len7, ok7 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok7 {
			panic(errors.New("failed to read length from memory"))
		}
		buf8, ok8 := i.module.Memory().Read(ptr6, len7)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok8 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str8 := string(buf8)
		result9[idx9] = str8
	}
	ptr10, ok10 := i.module.Memory().ReadUint32Le(uint32(results1 + 12))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok10 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len11, ok11 := i.module.Memory().ReadUint32Le(uint32(results1 + 16))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok11 {
		panic(errors.New("failed to read length from memory"))
	}
	base15 := ptr10
	len15 := len11
	result15 := make([]string, len15)
	for idx15 := uint32(0); idx15 < len15; idx15++ {
		base := base15 + idx15*8
		ptr12, ok12 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok12 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len13, ok13 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok13 {
			panic(errors.New("failed to read length from memory"))
		}
		buf14, ok14 := i.module.Memory().Read(ptr12, len13)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok14 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str14 := string(buf14)
		result15[idx15] = str14
	}
	ptr16, ok16 := i.module.Memory().ReadUint32Le(uint32(results1 + 20))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok16 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len17, ok17 := i.module.Memory().ReadUint32Le(uint32(results1 + 24))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok17 {
		panic(errors.New("failed to read length from memory"))
	}
	base21 := ptr16
	len21 := len17
	result21 := make([]string, len21)
	for idx21 := uint32(0); idx21 < len21; idx21++ {
		base := base21 + idx21*8
		ptr18, ok18 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok18 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len19, ok19 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok19 {
			panic(errors.New("failed to read length from memory"))
		}
		buf20, ok20 := i.module.Memory().Read(ptr18, len19)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok20 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str20 := string(buf20)
		result21[idx21] = str20
	}
	value22 := Progress{
		Completed:  result9,
		InProgress: result15,
		Remaining:  result21,
	}
	ptr23, ok23 := i.module.Memory().ReadUint32Le(uint32(results1 + 28))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok23 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len24, ok24 := i.module.Memory().ReadUint32Le(uint32(results1 + 32))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok24 {
		panic(errors.New("failed to read length from memory"))
	}
	base32 := ptr23
	len32 := len24
	result32 := make([]LearningAdd, len32)
	for idx32 := uint32(0); idx32 < len32; idx32++ {
		base := base32 + idx32*16
		ptr25, ok25 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok25 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len26, ok26 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read length from memory"))
		}
		buf27, ok27 := i.module.Memory().Read(ptr25, len26)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str27 := string(buf27)
		ptr28, ok28 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len29, ok29 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read length from memory"))
		}
		buf30, ok30 := i.module.Memory().Read(ptr28, len29)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok30 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str30 := string(buf30)
		value31 := LearningAdd{
			Reason: str27,
			Text:   str30,
		}
		result32[idx32] = value31
	}
	ptr33, ok33 := i.module.Memory().ReadUint32Le(uint32(results1 + 36))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok33 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len34, ok34 := i.module.Memory().ReadUint32Le(uint32(results1 + 40))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok34 {
		panic(errors.New("failed to read length from memory"))
	}
	base42 := ptr33
	len42 := len34
	result42 := make([]ArchiveOp, len42)
	for idx42 := uint32(0); idx42 < len42; idx42++ {
		base := base42 + idx42*16
		ptr35, ok35 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok35 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len36, ok36 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok36 {
			panic(errors.New("failed to read length from memory"))
		}
		buf37, ok37 := i.module.Memory().Read(ptr35, len36)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok37 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str37 := string(buf37)
		ptr38, ok38 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok38 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len39, ok39 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok39 {
			panic(errors.New("failed to read length from memory"))
		}
		buf40, ok40 := i.module.Memory().Read(ptr38, len39)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok40 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str40 := string(buf40)
		value41 := ArchiveOp{
			Id:     str37,
			Reason: str40,
		}
		result42[idx42] = value41
	}
	value43 := LearningOps{
		Add:     result32,
		Archive: result42,
	}
	ptr44, ok44 := i.module.Memory().ReadUint32Le(uint32(results1 + 44))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok44 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len45, ok45 := i.module.Memory().ReadUint32Le(uint32(results1 + 48))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok45 {
		panic(errors.New("failed to read length from memory"))
	}
	base56 := ptr44
	len56 := len45
	result56 := make([]VerbatimAdd, len56)
	for idx56 := uint32(0); idx56 < len56; idx56++ {
		base := base56 + idx56*24
		ptr46, ok46 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok46 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len47, ok47 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok47 {
			panic(errors.New("failed to read length from memory"))
		}
		buf48, ok48 := i.module.Memory().Read(ptr46, len47)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok48 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str48 := string(buf48)
		ptr49, ok49 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok49 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len50, ok50 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok50 {
			panic(errors.New("failed to read length from memory"))
		}
		buf51, ok51 := i.module.Memory().Read(ptr49, len50)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok51 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str51 := string(buf51)
		ptr52, ok52 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok52 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len53, ok53 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok53 {
			panic(errors.New("failed to read length from memory"))
		}
		buf54, ok54 := i.module.Memory().Read(ptr52, len53)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok54 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str54 := string(buf54)
		value55 := VerbatimAdd{
			Reason:  str48,
			Label:   str51,
			Snippet: str54,
		}
		result56[idx56] = value55
	}
	ptr57, ok57 := i.module.Memory().ReadUint32Le(uint32(results1 + 52))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok57 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len58, ok58 := i.module.Memory().ReadUint32Le(uint32(results1 + 56))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok58 {
		panic(errors.New("failed to read length from memory"))
	}
	base66 := ptr57
	len66 := len58
	result66 := make([]ArchiveOp, len66)
	for idx66 := uint32(0); idx66 < len66; idx66++ {
		base := base66 + idx66*16
		ptr59, ok59 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok59 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len60, ok60 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok60 {
			panic(errors.New("failed to read length from memory"))
		}
		buf61, ok61 := i.module.Memory().Read(ptr59, len60)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok61 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str61 := string(buf61)
		ptr62, ok62 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok62 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len63, ok63 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok63 {
			panic(errors.New("failed to read length from memory"))
		}
		buf64, ok64 := i.module.Memory().Read(ptr62, len63)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok64 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str64 := string(buf64)
		value65 := ArchiveOp{
			Id:     str61,
			Reason: str64,
		}
		result66[idx66] = value65
	}
	value67 := VerbatimOps{
		Add:     result56,
		Archive: result66,
	}
	value68 := Update{
		Progress:  value22,
		Learnings: value43,
		Verbatim:  value67,
	}
	ptr69, ok69 := i.module.Memory().ReadUint32Le(uint32(results1 + 60))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok69 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len70, ok70 := i.module.Memory().ReadUint32Le(uint32(results1 + 64))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok70 {
		panic(errors.New("failed to read length from memory"))
	}
	base82 := ptr69
	len82 := len70
	result82 := make([]Diagnostic, len82)
	for idx82 := uint32(0); idx82 < len82; idx82++ {
		base := base82 + idx82*24
		ptr71, ok71 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok71 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len72, ok72 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok72 {
			panic(errors.New("failed to read length from memory"))
		}
		buf73, ok73 := i.module.Memory().Read(ptr71, len72)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok73 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str73 := string(buf73)
		value74, ok74 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok74 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result75 := uint32(value74)
		value76, ok76 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok76 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result77 := uint32(value76)
		ptr78, ok78 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok78 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len79, ok79 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok79 {
			panic(errors.New("failed to read length from memory"))
		}
		buf80, ok80 := i.module.Memory().Read(ptr78, len79)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok80 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str80 := string(buf80)
		value81 := Diagnostic{
			Severity: str73,
			Line:     result75,
			Column:   result77,
			Message:  str80,
		}
		result82[idx82] = value81
	}
	value83 := ParseOutcome{
		Ok:          value3,
		Update:      value68,
		Diagnostics: result82,
	}
	return value83
}

func (i *EngineGoInstance) OverviewTemplate(
	ctx context.Context,
) string {
	raw0, err0 := i.module.ExportedFunction("overview-template").Call(ctx)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_overview-template").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	ptr1, ok1 := i.module.Memory().ReadUint32Le(uint32(results0 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok1 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read length from memory"))
	}
	buf3, ok3 := i.module.Memory().Read(ptr1, len2)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str3 := string(buf3)
	return str3
}

func (i *EngineGoInstance) MemoryNew(
	ctx context.Context,
) (uint32, error) {
	raw0, err0 := i.module.ExportedFunction("memory-new").Call(ctx)
	if err0 != nil {
		var default0 uint32
		return default0, err0
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-new").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	value1, ok1 := i.module.Memory().ReadByte(uint32(results0 + 0))
	if !ok1 {
		var default1 uint32
		return default1, errors.New("failed to read byte from memory")
	}
	var value7 uint32
	var err7 error
	switch value1 {
	case 0:
		value2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
		if !ok2 {
			var default2 uint32
			return default2, errors.New("failed to read i32 from memory")
		}
		result3 := uint32(value2)
		value7 = result3
	case 1:
		ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
		if !ok4 {
			var default4 uint32
			return default4, errors.New("failed to read pointer from memory")
		}
		len5, ok5 := i.module.Memory().ReadUint32Le(uint32(results0 + 8))
		if !ok5 {
			var default5 uint32
			return default5, errors.New("failed to read length from memory")
		}
		buf6, ok6 := i.module.Memory().Read(ptr4, len5)
		if !ok6 {
			var default6 uint32
			return default6, errors.New("failed to read bytes from memory")
		}
		str6 := string(buf6)
		err7 = errors.New(str6)
	default:
		err7 = errors.New("invalid variant discriminant for expected")
	}
	return value7, err7
}

func (i *EngineGoInstance) MemoryLoad(
	ctx context.Context,
	state string,
) (uint32, error) {
	arg0 := state
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	if err0 != nil {
		var default0 uint32
		return default0, err0
	}
	raw1, err1 := i.module.ExportedFunction("memory-load").Call(ctx, uint64(ptr0), uint64(len0))
	if err1 != nil {
		var default1 uint32
		return default1, err1
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-load").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	if !ok2 {
		var default2 uint32
		return default2, errors.New("failed to read byte from memory")
	}
	var value8 uint32
	var err8 error
	switch value2 {
	case 0:
		value3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok3 {
			var default3 uint32
			return default3, errors.New("failed to read i32 from memory")
		}
		result4 := uint32(value3)
		value8 = result4
	case 1:
		ptr5, ok5 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok5 {
			var default5 uint32
			return default5, errors.New("failed to read pointer from memory")
		}
		len6, ok6 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok6 {
			var default6 uint32
			return default6, errors.New("failed to read length from memory")
		}
		buf7, ok7 := i.module.Memory().Read(ptr5, len6)
		if !ok7 {
			var default7 uint32
			return default7, errors.New("failed to read bytes from memory")
		}
		str7 := string(buf7)
		err8 = errors.New(str7)
	default:
		err8 = errors.New("invalid variant discriminant for expected")
	}
	return value8, err8
}

func (i *EngineGoInstance) MemoryDrop(
	ctx context.Context,
	memory uint32,
) error {
	arg0 := memory
	raw0, err0 := i.module.ExportedFunction("memory-drop").Call(ctx, uint64(arg0))
	if err0 != nil {
		return err0
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-drop").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	value1, ok1 := i.module.Memory().ReadByte(uint32(results0 + 0))
	if !ok1 {
		return errors.New("failed to read byte from memory")
	}
	var err5 error
	switch value1 {
	case 0:
	case 1:
		ptr2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
		if !ok2 {
			return errors.New("failed to read pointer from memory")
		}
		len3, ok3 := i.module.Memory().ReadUint32Le(uint32(results0 + 8))
		if !ok3 {
			return errors.New("failed to read length from memory")
		}
		buf4, ok4 := i.module.Memory().Read(ptr2, len3)
		if !ok4 {
			return errors.New("failed to read bytes from memory")
		}
		str4 := string(buf4)
		err5 = errors.New(str4)
	default:
		err5 = errors.New("invalid variant discriminant for expected")
	}
	return err5
}

func (i *EngineGoInstance) MemorySave(
	ctx context.Context,
	memory uint32,
) string {
	arg0 := memory
	raw0, err0 := i.module.ExportedFunction("memory-save").Call(ctx, uint64(arg0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-save").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	ptr1, ok1 := i.module.Memory().ReadUint32Le(uint32(results0 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok1 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read length from memory"))
	}
	buf3, ok3 := i.module.Memory().Read(ptr1, len2)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str3 := string(buf3)
	return str3
}

func (i *EngineGoInstance) MemoryValidate(
	ctx context.Context,
	memory uint32,
	text string,
) ParseOutcome {
	arg0 := memory
	arg1 := text
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}
	raw1, err1 := i.module.ExportedFunction("memory-validate").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-validate").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read byte from memory"))
	}
	value3 := value2 != 0
	ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok4 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len5, ok5 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok5 {
		panic(errors.New("failed to read length from memory"))
	}
	base9 := ptr4
	len9 := len5
	result9 := make([]string, len9)
	for idx9 := uint32(0); idx9 < len9; idx9++ {
		base := base9 + idx9*8
		ptr6, ok6 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok6 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len7, ok7 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok7 {
			panic(errors.New("failed to read length from memory"))
		}
		buf8, ok8 := i.module.Memory().Read(ptr6, len7)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok8 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str8 := string(buf8)
		result9[idx9] = str8
	}
	ptr10, ok10 := i.module.Memory().ReadUint32Le(uint32(results1 + 12))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok10 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len11, ok11 := i.module.Memory().ReadUint32Le(uint32(results1 + 16))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok11 {
		panic(errors.New("failed to read length from memory"))
	}
	base15 := ptr10
	len15 := len11
	result15 := make([]string, len15)
	for idx15 := uint32(0); idx15 < len15; idx15++ {
		base := base15 + idx15*8
		ptr12, ok12 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok12 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len13, ok13 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok13 {
			panic(errors.New("failed to read length from memory"))
		}
		buf14, ok14 := i.module.Memory().Read(ptr12, len13)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok14 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str14 := string(buf14)
		result15[idx15] = str14
	}
	ptr16, ok16 := i.module.Memory().ReadUint32Le(uint32(results1 + 20))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok16 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len17, ok17 := i.module.Memory().ReadUint32Le(uint32(results1 + 24))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok17 {
		panic(errors.New("failed to read length from memory"))
	}
	base21 := ptr16
	len21 := len17
	result21 := make([]string, len21)
	for idx21 := uint32(0); idx21 < len21; idx21++ {
		base := base21 + idx21*8
		ptr18, ok18 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok18 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len19, ok19 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok19 {
			panic(errors.New("failed to read length from memory"))
		}
		buf20, ok20 := i.module.Memory().Read(ptr18, len19)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok20 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str20 := string(buf20)
		result21[idx21] = str20
	}
	value22 := Progress{
		Completed:  result9,
		InProgress: result15,
		Remaining:  result21,
	}
	ptr23, ok23 := i.module.Memory().ReadUint32Le(uint32(results1 + 28))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok23 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len24, ok24 := i.module.Memory().ReadUint32Le(uint32(results1 + 32))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok24 {
		panic(errors.New("failed to read length from memory"))
	}
	base32 := ptr23
	len32 := len24
	result32 := make([]LearningAdd, len32)
	for idx32 := uint32(0); idx32 < len32; idx32++ {
		base := base32 + idx32*16
		ptr25, ok25 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok25 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len26, ok26 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read length from memory"))
		}
		buf27, ok27 := i.module.Memory().Read(ptr25, len26)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str27 := string(buf27)
		ptr28, ok28 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len29, ok29 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read length from memory"))
		}
		buf30, ok30 := i.module.Memory().Read(ptr28, len29)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok30 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str30 := string(buf30)
		value31 := LearningAdd{
			Reason: str27,
			Text:   str30,
		}
		result32[idx32] = value31
	}
	ptr33, ok33 := i.module.Memory().ReadUint32Le(uint32(results1 + 36))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok33 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len34, ok34 := i.module.Memory().ReadUint32Le(uint32(results1 + 40))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok34 {
		panic(errors.New("failed to read length from memory"))
	}
	base42 := ptr33
	len42 := len34
	result42 := make([]ArchiveOp, len42)
	for idx42 := uint32(0); idx42 < len42; idx42++ {
		base := base42 + idx42*16
		ptr35, ok35 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok35 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len36, ok36 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok36 {
			panic(errors.New("failed to read length from memory"))
		}
		buf37, ok37 := i.module.Memory().Read(ptr35, len36)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok37 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str37 := string(buf37)
		ptr38, ok38 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok38 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len39, ok39 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok39 {
			panic(errors.New("failed to read length from memory"))
		}
		buf40, ok40 := i.module.Memory().Read(ptr38, len39)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok40 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str40 := string(buf40)
		value41 := ArchiveOp{
			Id:     str37,
			Reason: str40,
		}
		result42[idx42] = value41
	}
	value43 := LearningOps{
		Add:     result32,
		Archive: result42,
	}
	ptr44, ok44 := i.module.Memory().ReadUint32Le(uint32(results1 + 44))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok44 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len45, ok45 := i.module.Memory().ReadUint32Le(uint32(results1 + 48))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok45 {
		panic(errors.New("failed to read length from memory"))
	}
	base56 := ptr44
	len56 := len45
	result56 := make([]VerbatimAdd, len56)
	for idx56 := uint32(0); idx56 < len56; idx56++ {
		base := base56 + idx56*24
		ptr46, ok46 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok46 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len47, ok47 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok47 {
			panic(errors.New("failed to read length from memory"))
		}
		buf48, ok48 := i.module.Memory().Read(ptr46, len47)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok48 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str48 := string(buf48)
		ptr49, ok49 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok49 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len50, ok50 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok50 {
			panic(errors.New("failed to read length from memory"))
		}
		buf51, ok51 := i.module.Memory().Read(ptr49, len50)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok51 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str51 := string(buf51)
		ptr52, ok52 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok52 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len53, ok53 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok53 {
			panic(errors.New("failed to read length from memory"))
		}
		buf54, ok54 := i.module.Memory().Read(ptr52, len53)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok54 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str54 := string(buf54)
		value55 := VerbatimAdd{
			Reason:  str48,
			Label:   str51,
			Snippet: str54,
		}
		result56[idx56] = value55
	}
	ptr57, ok57 := i.module.Memory().ReadUint32Le(uint32(results1 + 52))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok57 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len58, ok58 := i.module.Memory().ReadUint32Le(uint32(results1 + 56))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok58 {
		panic(errors.New("failed to read length from memory"))
	}
	base66 := ptr57
	len66 := len58
	result66 := make([]ArchiveOp, len66)
	for idx66 := uint32(0); idx66 < len66; idx66++ {
		base := base66 + idx66*16
		ptr59, ok59 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok59 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len60, ok60 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok60 {
			panic(errors.New("failed to read length from memory"))
		}
		buf61, ok61 := i.module.Memory().Read(ptr59, len60)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok61 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str61 := string(buf61)
		ptr62, ok62 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok62 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len63, ok63 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok63 {
			panic(errors.New("failed to read length from memory"))
		}
		buf64, ok64 := i.module.Memory().Read(ptr62, len63)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok64 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str64 := string(buf64)
		value65 := ArchiveOp{
			Id:     str61,
			Reason: str64,
		}
		result66[idx66] = value65
	}
	value67 := VerbatimOps{
		Add:     result56,
		Archive: result66,
	}
	value68 := Update{
		Progress:  value22,
		Learnings: value43,
		Verbatim:  value67,
	}
	ptr69, ok69 := i.module.Memory().ReadUint32Le(uint32(results1 + 60))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok69 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len70, ok70 := i.module.Memory().ReadUint32Le(uint32(results1 + 64))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok70 {
		panic(errors.New("failed to read length from memory"))
	}
	base82 := ptr69
	len82 := len70
	result82 := make([]Diagnostic, len82)
	for idx82 := uint32(0); idx82 < len82; idx82++ {
		base := base82 + idx82*24
		ptr71, ok71 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok71 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len72, ok72 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok72 {
			panic(errors.New("failed to read length from memory"))
		}
		buf73, ok73 := i.module.Memory().Read(ptr71, len72)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok73 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str73 := string(buf73)
		value74, ok74 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok74 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result75 := uint32(value74)
		value76, ok76 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok76 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result77 := uint32(value76)
		ptr78, ok78 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok78 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len79, ok79 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok79 {
			panic(errors.New("failed to read length from memory"))
		}
		buf80, ok80 := i.module.Memory().Read(ptr78, len79)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok80 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str80 := string(buf80)
		value81 := Diagnostic{
			Severity: str73,
			Line:     result75,
			Column:   result77,
			Message:  str80,
		}
		result82[idx82] = value81
	}
	value83 := ParseOutcome{
		Ok:          value3,
		Update:      value68,
		Diagnostics: result82,
	}
	return value83
}

func (i *EngineGoInstance) MemoryApply(
	ctx context.Context,
	memory uint32,
	text string,
	now string,
	overview bool,
	state bool,
) ApplyOutcome {
	arg0 := memory
	arg1 := text
	arg2 := now
	arg3 := overview
	arg4 := state
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, arg2, memory1, realloc1)
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}
	var value2 uint32
	if arg3 {
		value2 = 1
	} else {
		value2 = 0
	}
	var value3 uint32
	if arg4 {
		value3 = 1
	} else {
		value3 = 0
	}
	raw4, err4 := i.module.ExportedFunction("memory-apply").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0), uint64(ptr1), uint64(len1), uint64(value2), uint64(value3))
	// The return type doesn't contain an error so we panic if one is encountered
	if err4 != nil {
		panic(err4)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-apply").Call(ctx, raw4...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results4 := raw4[0]
	value5, ok5 := i.module.Memory().ReadByte(uint32(results4 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok5 {
		panic(errors.New("failed to read byte from memory"))
	}
	value6 := value5 != 0
	value7, ok7 := i.module.Memory().ReadUint32Le(uint32(results4 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok7 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result8 := uint32(value7)
	ptr9, ok9 := i.module.Memory().ReadUint32Le(uint32(results4 + 8))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok9 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len10, ok10 := i.module.Memory().ReadUint32Le(uint32(results4 + 12))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok10 {
		panic(errors.New("failed to read length from memory"))
	}
	buf11, ok11 := i.module.Memory().Read(ptr9, len10)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok11 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str11 := string(buf11)
	ptr12, ok12 := i.module.Memory().ReadUint32Le(uint32(results4 + 16))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok12 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len13, ok13 := i.module.Memory().ReadUint32Le(uint32(results4 + 20))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok13 {
		panic(errors.New("failed to read length from memory"))
	}
	base17 := ptr12
	len17 := len13
	result17 := make([]string, len17)
	for idx17 := uint32(0); idx17 < len17; idx17++ {
		base := base17 + idx17*8
		ptr14, ok14 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok14 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len15, ok15 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok15 {
			panic(errors.New("failed to read length from memory"))
		}
		buf16, ok16 := i.module.Memory().Read(ptr14, len15)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok16 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str16 := string(buf16)
		result17[idx17] = str16
	}
	ptr18, ok18 := i.module.Memory().ReadUint32Le(uint32(results4 + 24))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok18 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len19, ok19 := i.module.Memory().ReadUint32Le(uint32(results4 + 28))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok19 {
		panic(errors.New("failed to read length from memory"))
	}
	base23 := ptr18
	len23 := len19
	result23 := make([]string, len23)
	for idx23 := uint32(0); idx23 < len23; idx23++ {
		base := base23 + idx23*8
		ptr20, ok20 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok20 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len21, ok21 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok21 {
			panic(errors.New("failed to read length from memory"))
		}
		buf22, ok22 := i.module.Memory().Read(ptr20, len21)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok22 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str22 := string(buf22)
		result23[idx23] = str22
	}
	ptr24, ok24 := i.module.Memory().ReadUint32Le(uint32(results4 + 32))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok24 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len25, ok25 := i.module.Memory().ReadUint32Le(uint32(results4 + 36))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok25 {
		panic(errors.New("failed to read length from memory"))
	}
	base29 := ptr24
	len29 := len25
	result29 := make([]string, len29)
	for idx29 := uint32(0); idx29 < len29; idx29++ {
		base := base29 + idx29*8
		ptr26, ok26 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len27, ok27 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read length from memory"))
		}
		buf28, ok28 := i.module.Memory().Read(ptr26, len27)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str28 := string(buf28)
		result29[idx29] = str28
	}
	ptr30, ok30 := i.module.Memory().ReadUint32Le(uint32(results4 + 40))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok30 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len31, ok31 := i.module.Memory().ReadUint32Le(uint32(results4 + 44))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok31 {
		panic(errors.New("failed to read length from memory"))
	}
	base43 := ptr30
	len43 := len31
	result43 := make([]Diagnostic, len43)
	for idx43 := uint32(0); idx43 < len43; idx43++ {
		base := base43 + idx43*24
		ptr32, ok32 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok32 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len33, ok33 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok33 {
			panic(errors.New("failed to read length from memory"))
		}
		buf34, ok34 := i.module.Memory().Read(ptr32, len33)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok34 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str34 := string(buf34)
		value35, ok35 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok35 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result36 := uint32(value35)
		value37, ok37 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok37 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result38 := uint32(value37)
		ptr39, ok39 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok39 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len40, ok40 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok40 {
			panic(errors.New("failed to read length from memory"))
		}
		buf41, ok41 := i.module.Memory().Read(ptr39, len40)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok41 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str41 := string(buf41)
		value42 := Diagnostic{
			Severity: str34,
			Line:     result36,
			Column:   result38,
			Message:  str41,
		}
		result43[idx43] = value42
	}
	ptr44, ok44 := i.module.Memory().ReadUint32Le(uint32(results4 + 48))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok44 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len45, ok45 := i.module.Memory().ReadUint32Le(uint32(results4 + 52))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok45 {
		panic(errors.New("failed to read length from memory"))
	}
	buf46, ok46 := i.module.Memory().Read(ptr44, len45)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok46 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str46 := string(buf46)
	ptr47, ok47 := i.module.Memory().ReadUint32Le(uint32(results4 + 56))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok47 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len48, ok48 := i.module.Memory().ReadUint32Le(uint32(results4 + 60))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok48 {
		panic(errors.New("failed to read length from memory"))
	}
	buf49, ok49 := i.module.Memory().Read(ptr47, len48)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok49 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str49 := string(buf49)
	ptr50, ok50 := i.module.Memory().ReadUint32Le(uint32(results4 + 64))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok50 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len51, ok51 := i.module.Memory().ReadUint32Le(uint32(results4 + 68))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok51 {
		panic(errors.New("failed to read length from memory"))
	}
	buf52, ok52 := i.module.Memory().Read(ptr50, len51)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok52 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str52 := string(buf52)
	value53 := Applied{
		Seq:      result8,
		Diff:     str11,
		Added:    result17,
		Archived: result23,
		Ignored:  result29,
		Warnings: result43,
		LogEntry: str46,
		Overview: str49,
		State:    str52,
	}
	ptr54, ok54 := i.module.Memory().ReadUint32Le(uint32(results4 + 72))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok54 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len55, ok55 := i.module.Memory().ReadUint32Le(uint32(results4 + 76))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok55 {
		panic(errors.New("failed to read length from memory"))
	}
	base67 := ptr54
	len67 := len55
	result67 := make([]Diagnostic, len67)
	for idx67 := uint32(0); idx67 < len67; idx67++ {
		base := base67 + idx67*24
		ptr56, ok56 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok56 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len57, ok57 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok57 {
			panic(errors.New("failed to read length from memory"))
		}
		buf58, ok58 := i.module.Memory().Read(ptr56, len57)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok58 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str58 := string(buf58)
		value59, ok59 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok59 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result60 := uint32(value59)
		value61, ok61 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok61 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result62 := uint32(value61)
		ptr63, ok63 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok63 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len64, ok64 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok64 {
			panic(errors.New("failed to read length from memory"))
		}
		buf65, ok65 := i.module.Memory().Read(ptr63, len64)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok65 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str65 := string(buf65)
		value66 := Diagnostic{
			Severity: str58,
			Line:     result60,
			Column:   result62,
			Message:  str65,
		}
		result67[idx67] = value66
	}
	value68 := ApplyOutcome{
		Ok:          value6,
		Applied:     value53,
		Diagnostics: result67,
	}
	return value68
}

func (i *EngineGoInstance) MemoryMerge(
	ctx context.Context,
	memory uint32,
	updates []Update,
	now string,
	overview bool,
	state bool,
) (Applied, error) {
	arg0 := memory
	arg1 := updates
	arg2 := now
	arg3 := overview
	arg4 := state
	vec27 := arg1
	len27 := uint64(len(vec27))
	result27, err27 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len27*56)
	if err27 != nil {
		var default27 Applied
		return default27, err27
	}
	ptr27 := result27[0]
	for idx := uint64(0); idx < len27; idx++ {
		e := vec27[idx]
		base := uint32(ptr27 + uint64(idx)*uint64(56))
		progress0 := e.Progress
		learnings0 := e.Learnings
		verbatim0 := e.Verbatim
		completed1 := progress0.Completed
		inProgress1 := progress0.InProgress
		remaining1 := progress0.Remaining
		vec3 := completed1
		len3 := uint64(len(vec3))
		result3, err3 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len3*8)
		if err3 != nil {
			var default3 Applied
			return default3, err3
		}
		ptr3 := result3[0]
		for idx := uint64(0); idx < len3; idx++ {
			e := vec3[idx]
			base := uint32(ptr3 + uint64(idx)*uint64(8))
			memory2 := i.module.Memory()
			realloc2 := i.module.ExportedFunction("cabi_realloc")
			ptr2, len2, err2 := writeString(ctx, e, memory2, realloc2)
			if err2 != nil {
				var default2 Applied
				return default2, err2
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len2))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr2))
		}
		i.module.Memory().WriteUint32Le(base+4, uint32(len3))
		i.module.Memory().WriteUint32Le(base+0, uint32(ptr3))
		vec5 := inProgress1
		len5 := uint64(len(vec5))
		result5, err5 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len5*8)
		if err5 != nil {
			var default5 Applied
			return default5, err5
		}
		ptr5 := result5[0]
		for idx := uint64(0); idx < len5; idx++ {
			e := vec5[idx]
			base := uint32(ptr5 + uint64(idx)*uint64(8))
			memory4 := i.module.Memory()
			realloc4 := i.module.ExportedFunction("cabi_realloc")
			ptr4, len4, err4 := writeString(ctx, e, memory4, realloc4)
			if err4 != nil {
				var default4 Applied
				return default4, err4
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len4))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr4))
		}
		i.module.Memory().WriteUint32Le(base+12, uint32(len5))
		i.module.Memory().WriteUint32Le(base+8, uint32(ptr5))
		vec7 := remaining1
		len7 := uint64(len(vec7))
		result7, err7 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len7*8)
		if err7 != nil {
			var default7 Applied
			return default7, err7
		}
		ptr7 := result7[0]
		for idx := uint64(0); idx < len7; idx++ {
			e := vec7[idx]
			base := uint32(ptr7 + uint64(idx)*uint64(8))
			memory6 := i.module.Memory()
			realloc6 := i.module.ExportedFunction("cabi_realloc")
			ptr6, len6, err6 := writeString(ctx, e, memory6, realloc6)
			if err6 != nil {
				var default6 Applied
				return default6, err6
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len6))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr6))
		}
		i.module.Memory().WriteUint32Le(base+20, uint32(len7))
		i.module.Memory().WriteUint32Le(base+16, uint32(ptr7))
		add8 := learnings0.Add
		archive8 := learnings0.Archive
		vec12 := add8
		len12 := uint64(len(vec12))
		result12, err12 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len12*16)
		if err12 != nil {
			var default12 Applied
			return default12, err12
		}
		ptr12 := result12[0]
		for idx := uint64(0); idx < len12; idx++ {
			e := vec12[idx]
			base := uint32(ptr12 + uint64(idx)*uint64(16))
			reason9 := e.Reason
			text9 := e.Text
			memory10 := i.module.Memory()
			realloc10 := i.module.ExportedFunction("cabi_realloc")
			ptr10, len10, err10 := writeString(ctx, reason9, memory10, realloc10)
			if err10 != nil {
				var default10 Applied
				return default10, err10
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len10))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr10))
			memory11 := i.module.Memory()
			realloc11 := i.module.ExportedFunction("cabi_realloc")
			ptr11, len11, err11 := writeString(ctx, text9, memory11, realloc11)
			if err11 != nil {
				var default11 Applied
				return default11, err11
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len11))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr11))
		}
		i.module.Memory().WriteUint32Le(base+28, uint32(len12))
		i.module.Memory().WriteUint32Le(base+24, uint32(ptr12))
		vec16 := archive8
		len16 := uint64(len(vec16))
		result16, err16 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len16*16)
		if err16 != nil {
			var default16 Applied
			return default16, err16
		}
		ptr16 := result16[0]
		for idx := uint64(0); idx < len16; idx++ {
			e := vec16[idx]
			base := uint32(ptr16 + uint64(idx)*uint64(16))
			id13 := e.Id
			reason13 := e.Reason
			memory14 := i.module.Memory()
			realloc14 := i.module.ExportedFunction("cabi_realloc")
			ptr14, len14, err14 := writeString(ctx, id13, memory14, realloc14)
			if err14 != nil {
				var default14 Applied
				return default14, err14
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len14))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr14))
			memory15 := i.module.Memory()
			realloc15 := i.module.ExportedFunction("cabi_realloc")
			ptr15, len15, err15 := writeString(ctx, reason13, memory15, realloc15)
			if err15 != nil {
				var default15 Applied
				return default15, err15
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len15))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr15))
		}
		i.module.Memory().WriteUint32Le(base+36, uint32(len16))
		i.module.Memory().WriteUint32Le(base+32, uint32(ptr16))
		add17 := verbatim0.Add
		archive17 := verbatim0.Archive
		vec22 := add17
		len22 := uint64(len(vec22))
		result22, err22 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len22*24)
		if err22 != nil {
			var default22 Applied
			return default22, err22
		}
		ptr22 := result22[0]
		for idx := uint64(0); idx < len22; idx++ {
			e := vec22[idx]
			base := uint32(ptr22 + uint64(idx)*uint64(24))
			reason18 := e.Reason
			label18 := e.Label
			snippet18 := e.Snippet
			memory19 := i.module.Memory()
			realloc19 := i.module.ExportedFunction("cabi_realloc")
			ptr19, len19, err19 := writeString(ctx, reason18, memory19, realloc19)
			if err19 != nil {
				var default19 Applied
				return default19, err19
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len19))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr19))
			memory20 := i.module.Memory()
			realloc20 := i.module.ExportedFunction("cabi_realloc")
			ptr20, len20, err20 := writeString(ctx, label18, memory20, realloc20)
			if err20 != nil {
				var default20 Applied
				return default20, err20
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len20))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr20))
			memory21 := i.module.Memory()
			realloc21 := i.module.ExportedFunction("cabi_realloc")
			ptr21, len21, err21 := writeString(ctx, snippet18, memory21, realloc21)
			if err21 != nil {
				var default21 Applied
				return default21, err21
			}
			i.module.Memory().WriteUint32Le(base+20, uint32(len21))
			i.module.Memory().WriteUint32Le(base+16, uint32(ptr21))
		}
		i.module.Memory().WriteUint32Le(base+44, uint32(len22))
		i.module.Memory().WriteUint32Le(base+40, uint32(ptr22))
		vec26 := archive17
		len26 := uint64(len(vec26))
		result26, err26 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len26*16)
		if err26 != nil {
			var default26 Applied
			return default26, err26
		}
		ptr26 := result26[0]
		for idx := uint64(0); idx < len26; idx++ {
			e := vec26[idx]
			base := uint32(ptr26 + uint64(idx)*uint64(16))
			id23 := e.Id
			reason23 := e.Reason
			memory24 := i.module.Memory()
			realloc24 := i.module.ExportedFunction("cabi_realloc")
			ptr24, len24, err24 := writeString(ctx, id23, memory24, realloc24)
			if err24 != nil {
				var default24 Applied
				return default24, err24
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len24))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr24))
			memory25 := i.module.Memory()
			realloc25 := i.module.ExportedFunction("cabi_realloc")
			ptr25, len25, err25 := writeString(ctx, reason23, memory25, realloc25)
			if err25 != nil {
				var default25 Applied
				return default25, err25
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len25))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr25))
		}
		i.module.Memory().WriteUint32Le(base+52, uint32(len26))
		i.module.Memory().WriteUint32Le(base+48, uint32(ptr26))
	}
	memory28 := i.module.Memory()
	realloc28 := i.module.ExportedFunction("cabi_realloc")
	ptr28, len28, err28 := writeString(ctx, arg2, memory28, realloc28)
	if err28 != nil {
		var default28 Applied
		return default28, err28
	}
	var value29 uint32
	if arg3 {
		value29 = 1
	} else {
		value29 = 0
	}
	var value30 uint32
	if arg4 {
		value30 = 1
	} else {
		value30 = 0
	}
	raw31, err31 := i.module.ExportedFunction("memory-merge").Call(ctx, uint64(arg0), uint64(ptr27), uint64(len27), uint64(ptr28), uint64(len28), uint64(value29), uint64(value30))
	if err31 != nil {
		var default31 Applied
		return default31, err31
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-merge").Call(ctx, raw31...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results31 := raw31[0]
	value32, ok32 := i.module.Memory().ReadByte(uint32(results31 + 0))
	if !ok32 {
		var default32 Applied
		return default32, errors.New("failed to read byte from memory")
	}
	var value83 Applied
	var err83 error
	switch value32 {
	case 0:
		value33, ok33 := i.module.Memory().ReadUint32Le(uint32(results31 + 4))
		if !ok33 {
			var default33 Applied
			return default33, errors.New("failed to read i32 from memory")
		}
		result34 := uint32(value33)
		ptr35, ok35 := i.module.Memory().ReadUint32Le(uint32(results31 + 8))
		if !ok35 {
			var default35 Applied
			return default35, errors.New("failed to read pointer from memory")
		}
		len36, ok36 := i.module.Memory().ReadUint32Le(uint32(results31 + 12))
		if !ok36 {
			var default36 Applied
			return default36, errors.New("failed to read length from memory")
		}
		buf37, ok37 := i.module.Memory().Read(ptr35, len36)
		if !ok37 {
			var default37 Applied
			return default37, errors.New("failed to read bytes from memory")
		}
		str37 := string(buf37)
		ptr38, ok38 := i.module.Memory().ReadUint32Le(uint32(results31 + 16))
		if !ok38 {
			var default38 Applied
			return default38, errors.New("failed to read pointer from memory")
		}
		len39, ok39 := i.module.Memory().ReadUint32Le(uint32(results31 + 20))
		if !ok39 {
			var default39 Applied
			return default39, errors.New("failed to read length from memory")
		}
		base43 := ptr38
		len43 := len39
		result43 := make([]string, len43)
		for idx43 := uint32(0); idx43 < len43; idx43++ {
			base := base43 + idx43*8
			ptr40, ok40 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			if !ok40 {
				var default40 Applied
				return default40, errors.New("failed to read pointer from memory")
			}
			len41, ok41 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			if !ok41 {
				var default41 Applied
				return default41, errors.New("failed to read length from memory")
			}
			buf42, ok42 := i.module.Memory().Read(ptr40, len41)
			if !ok42 {
				var default42 Applied
				return default42, errors.New("failed to read bytes from memory")
			}
			str42 := string(buf42)
			result43[idx43] = str42
		}
		ptr44, ok44 := i.module.Memory().ReadUint32Le(uint32(results31 + 24))
		if !ok44 {
			var default44 Applied
			return default44, errors.New("failed to read pointer from memory")
		}
		len45, ok45 := i.module.Memory().ReadUint32Le(uint32(results31 + 28))
		if !ok45 {
			var default45 Applied
			return default45, errors.New("failed to read length from memory")
		}
		base49 := ptr44
		len49 := len45
		result49 := make([]string, len49)
		for idx49 := uint32(0); idx49 < len49; idx49++ {
			base := base49 + idx49*8
			ptr46, ok46 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			if !ok46 {
				var default46 Applied
				return default46, errors.New("failed to read pointer from memory")
			}
			len47, ok47 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			if !ok47 {
				var default47 Applied
				return default47, errors.New("failed to read length from memory")
			}
			buf48, ok48 := i.module.Memory().Read(ptr46, len47)
			if !ok48 {
				var default48 Applied
				return default48, errors.New("failed to read bytes from memory")
			}
			str48 := string(buf48)
			result49[idx49] = str48
		}
		ptr50, ok50 := i.module.Memory().ReadUint32Le(uint32(results31 + 32))
		if !ok50 {
			var default50 Applied
			return default50, errors.New("failed to read pointer from memory")
		}
		len51, ok51 := i.module.Memory().ReadUint32Le(uint32(results31 + 36))
		if !ok51 {
			var default51 Applied
			return default51, errors.New("failed to read length from memory")
		}
		base55 := ptr50
		len55 := len51
		result55 := make([]string, len55)
		for idx55 := uint32(0); idx55 < len55; idx55++ {
			base := base55 + idx55*8
			ptr52, ok52 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			if !ok52 {
				var default52 Applied
				return default52, errors.New("failed to read pointer from memory")
			}
			len53, ok53 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			if !ok53 {
				var default53 Applied
				return default53, errors.New("failed to read length from memory")
			}
			buf54, ok54 := i.module.Memory().Read(ptr52, len53)
			if !ok54 {
				var default54 Applied
				return default54, errors.New("failed to read bytes from memory")
			}
			str54 := string(buf54)
			result55[idx55] = str54
		}
		ptr56, ok56 := i.module.Memory().ReadUint32Le(uint32(results31 + 40))
		if !ok56 {
			var default56 Applied
			return default56, errors.New("failed to read pointer from memory")
		}
		len57, ok57 := i.module.Memory().ReadUint32Le(uint32(results31 + 44))
		if !ok57 {
			var default57 Applied
			return default57, errors.New("failed to read length from memory")
		}
		base69 := ptr56
		len69 := len57
		result69 := make([]Diagnostic, len69)
		for idx69 := uint32(0); idx69 < len69; idx69++ {
			base := base69 + idx69*24
			ptr58, ok58 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			if !ok58 {
				var default58 Applied
				return default58, errors.New("failed to read pointer from memory")
			}
			len59, ok59 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			if !ok59 {
				var default59 Applied
				return default59, errors.New("failed to read length from memory")
			}
			buf60, ok60 := i.module.Memory().Read(ptr58, len59)
			if !ok60 {
				var default60 Applied
				return default60, errors.New("failed to read bytes from memory")
			}
			str60 := string(buf60)
			value61, ok61 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			if !ok61 {
				var default61 Applied
				return default61, errors.New("failed to read i32 from memory")
			}
			result62 := uint32(value61)
			value63, ok63 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			if !ok63 {
				var default63 Applied
				return default63, errors.New("failed to read i32 from memory")
			}
			result64 := uint32(value63)
			ptr65, ok65 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			if !ok65 {
				var default65 Applied
				return default65, errors.New("failed to read pointer from memory")
			}
			len66, ok66 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			if !ok66 {
				var default66 Applied
				return default66, errors.New("failed to read length from memory")
			}
			buf67, ok67 := i.module.Memory().Read(ptr65, len66)
			if !ok67 {
				var default67 Applied
				return default67, errors.New("failed to read bytes from memory")
			}
			str67 := string(buf67)
			value68 := Diagnostic{
				Severity: str60,
				Line:     result62,
				Column:   result64,
				Message:  str67,
			}
			result69[idx69] = value68
		}
		ptr70, ok70 := i.module.Memory().ReadUint32Le(uint32(results31 + 48))
		if !ok70 {
			var default70 Applied
			return default70, errors.New("failed to read pointer from memory")
		}
		len71, ok71 := i.module.Memory().ReadUint32Le(uint32(results31 + 52))
		if !ok71 {
			var default71 Applied
			return default71, errors.New("failed to read length from memory")
		}
		buf72, ok72 := i.module.Memory().Read(ptr70, len71)
		if !ok72 {
			var default72 Applied
			return default72, errors.New("failed to read bytes from memory")
		}
		str72 := string(buf72)
		ptr73, ok73 := i.module.Memory().ReadUint32Le(uint32(results31 + 56))
		if !ok73 {
			var default73 Applied
			return default73, errors.New("failed to read pointer from memory")
		}
		len74, ok74 := i.module.Memory().ReadUint32Le(uint32(results31 + 60))
		if !ok74 {
			var default74 Applied
			return default74, errors.New("failed to read length from memory")
		}
		buf75, ok75 := i.module.Memory().Read(ptr73, len74)
		if !ok75 {
			var default75 Applied
			return default75, errors.New("failed to read bytes from memory")
		}
		str75 := string(buf75)
		ptr76, ok76 := i.module.Memory().ReadUint32Le(uint32(results31 + 64))
		if !ok76 {
			var default76 Applied
			return default76, errors.New("failed to read pointer from memory")
		}
		len77, ok77 := i.module.Memory().ReadUint32Le(uint32(results31 + 68))
		if !ok77 {
			var default77 Applied
			return default77, errors.New("failed to read length from memory")
		}
		buf78, ok78 := i.module.Memory().Read(ptr76, len77)
		if !ok78 {
			var default78 Applied
			return default78, errors.New("failed to read bytes from memory")
		}
		str78 := string(buf78)
		value79 := Applied{
			Seq:      result34,
			Diff:     str37,
			Added:    result43,
			Archived: result49,
			Ignored:  result55,
			Warnings: result69,
			LogEntry: str72,
			Overview: str75,
			State:    str78,
		}
		value83 = value79
	case 1:
		ptr80, ok80 := i.module.Memory().ReadUint32Le(uint32(results31 + 4))
		if !ok80 {
			var default80 Applied
			return default80, errors.New("failed to read pointer from memory")
		}
		len81, ok81 := i.module.Memory().ReadUint32Le(uint32(results31 + 8))
		if !ok81 {
			var default81 Applied
			return default81, errors.New("failed to read length from memory")
		}
		buf82, ok82 := i.module.Memory().Read(ptr80, len81)
		if !ok82 {
			var default82 Applied
			return default82, errors.New("failed to read bytes from memory")
		}
		str82 := string(buf82)
		err83 = errors.New(str82)
	default:
		err83 = errors.New("invalid variant discriminant for expected")
	}
	return value83, err83
}

func (i *EngineGoInstance) MemoryRender(
	ctx context.Context,
	memory uint32,
) string {
	arg0 := memory
	raw0, err0 := i.module.ExportedFunction("memory-render").Call(ctx, uint64(arg0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-render").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	ptr1, ok1 := i.module.Memory().ReadUint32Le(uint32(results0 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok1 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read length from memory"))
	}
	buf3, ok3 := i.module.Memory().Read(ptr1, len2)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str3 := string(buf3)
	return str3
}

func (i *EngineGoInstance) MemorySnapshot(
	ctx context.Context,
	memory uint32,
) Snapshot {
	arg0 := memory
	raw0, err0 := i.module.ExportedFunction("memory-snapshot").Call(ctx, uint64(arg0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-snapshot").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	ptr1, ok1 := i.module.Memory().ReadUint32Le(uint32(results0 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok1 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read length from memory"))
	}
	base6 := ptr1
	len6 := len2
	result6 := make([]string, len6)
	for idx6 := uint32(0); idx6 < len6; idx6++ {
		base := base6 + idx6*8
		ptr3, ok3 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok3 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len4, ok4 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok4 {
			panic(errors.New("failed to read length from memory"))
		}
		buf5, ok5 := i.module.Memory().Read(ptr3, len4)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok5 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str5 := string(buf5)
		result6[idx6] = str5
	}
	ptr7, ok7 := i.module.Memory().ReadUint32Le(uint32(results0 + 8))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok7 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len8, ok8 := i.module.Memory().ReadUint32Le(uint32(results0 + 12))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok8 {
		panic(errors.New("failed to read length from memory"))
	}
	base12 := ptr7
	len12 := len8
	result12 := make([]string, len12)
	for idx12 := uint32(0); idx12 < len12; idx12++ {
		base := base12 + idx12*8
		ptr9, ok9 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok9 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len10, ok10 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok10 {
			panic(errors.New("failed to read length from memory"))
		}
		buf11, ok11 := i.module.Memory().Read(ptr9, len10)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok11 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str11 := string(buf11)
		result12[idx12] = str11
	}
	ptr13, ok13 := i.module.Memory().ReadUint32Le(uint32(results0 + 16))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok13 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len14, ok14 := i.module.Memory().ReadUint32Le(uint32(results0 + 20))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok14 {
		panic(errors.New("failed to read length from memory"))
	}
	base18 := ptr13
	len18 := len14
	result18 := make([]string, len18)
	for idx18 := uint32(0); idx18 < len18; idx18++ {
		base := base18 + idx18*8
		ptr15, ok15 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok15 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len16, ok16 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok16 {
			panic(errors.New("failed to read length from memory"))
		}
		buf17, ok17 := i.module.Memory().Read(ptr15, len16)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok17 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str17 := string(buf17)
		result18[idx18] = str17
	}
	value19 := Progress{
		Completed:  result6,
		InProgress: result12,
		Remaining:  result18,
	}
	ptr20, ok20 := i.module.Memory().ReadUint32Le(uint32(results0 + 24))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok20 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len21, ok21 := i.module.Memory().ReadUint32Le(uint32(results0 + 28))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok21 {
		panic(errors.New("failed to read length from memory"))
	}
	base41 := ptr20
	len41 := len21
	result41 := make([]Learning, len41)
	for idx41 := uint32(0); idx41 < len41; idx41++ {
		base := base41 + idx41*48
		ptr22, ok22 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok22 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len23, ok23 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok23 {
			panic(errors.New("failed to read length from memory"))
		}
		buf24, ok24 := i.module.Memory().Read(ptr22, len23)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok24 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str24 := string(buf24)
		ptr25, ok25 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok25 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len26, ok26 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read length from memory"))
		}
		buf27, ok27 := i.module.Memory().Read(ptr25, len26)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str27 := string(buf27)
		ptr28, ok28 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len29, ok29 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read length from memory"))
		}
		buf30, ok30 := i.module.Memory().Read(ptr28, len29)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok30 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str30 := string(buf30)
		ptr31, ok31 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok31 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len32, ok32 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok32 {
			panic(errors.New("failed to read length from memory"))
		}
		buf33, ok33 := i.module.Memory().Read(ptr31, len32)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok33 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str33 := string(buf33)
		ptr34, ok34 := i.module.Memory().ReadUint32Le(uint32(base + 32))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok34 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len35, ok35 := i.module.Memory().ReadUint32Le(uint32(base + 36))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok35 {
			panic(errors.New("failed to read length from memory"))
		}
		buf36, ok36 := i.module.Memory().Read(ptr34, len35)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok36 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str36 := string(buf36)
		ptr37, ok37 := i.module.Memory().ReadUint32Le(uint32(base + 40))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok37 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len38, ok38 := i.module.Memory().ReadUint32Le(uint32(base + 44))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok38 {
			panic(errors.New("failed to read length from memory"))
		}
		buf39, ok39 := i.module.Memory().Read(ptr37, len38)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok39 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str39 := string(buf39)
		value40 := Learning{
			Id:            str24,
			Text:          str27,
			Reason:        str30,
			AddedAt:       str33,
			ArchivedAt:    str36,
			ArchiveReason: str39,
		}
		result41[idx41] = value40
	}
	ptr42, ok42 := i.module.Memory().ReadUint32Le(uint32(results0 + 32))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok42 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len43, ok43 := i.module.Memory().ReadUint32Le(uint32(results0 + 36))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok43 {
		panic(errors.New("failed to read length from memory"))
	}
	base66 := ptr42
	len66 := len43
	result66 := make([]VerbatimEntry, len66)
	for idx66 := uint32(0); idx66 < len66; idx66++ {
		base := base66 + idx66*56
		ptr44, ok44 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok44 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len45, ok45 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok45 {
			panic(errors.New("failed to read length from memory"))
		}
		buf46, ok46 := i.module.Memory().Read(ptr44, len45)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok46 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str46 := string(buf46)
		ptr47, ok47 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok47 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len48, ok48 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok48 {
			panic(errors.New("failed to read length from memory"))
		}
		buf49, ok49 := i.module.Memory().Read(ptr47, len48)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok49 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str49 := string(buf49)
		ptr50, ok50 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok50 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len51, ok51 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok51 {
			panic(errors.New("failed to read length from memory"))
		}
		buf52, ok52 := i.module.Memory().Read(ptr50, len51)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok52 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str52 := string(buf52)
		ptr53, ok53 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok53 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len54, ok54 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok54 {
			panic(errors.New("failed to read length from memory"))
		}
		buf55, ok55 := i.module.Memory().Read(ptr53, len54)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok55 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str55 := string(buf55)
		ptr56, ok56 := i.module.Memory().ReadUint32Le(uint32(base + 32))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok56 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len57, ok57 := i.module.Memory().ReadUint32Le(uint32(base + 36))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok57 {
			panic(errors.New("failed to read length from memory"))
		}
		buf58, ok58 := i.module.Memory().Read(ptr56, len57)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok58 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str58 := string(buf58)
		ptr59, ok59 := i.module.Memory().ReadUint32Le(uint32(base + 40))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok59 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len60, ok60 := i.module.Memory().ReadUint32Le(uint32(base + 44))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok60 {
			panic(errors.New("failed to read length from memory"))
		}
		buf61, ok61 := i.module.Memory().Read(ptr59, len60)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok61 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str61 := string(buf61)
		ptr62, ok62 := i.module.Memory().ReadUint32Le(uint32(base + 48))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok62 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len63, ok63 := i.module.Memory().ReadUint32Le(uint32(base + 52))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok63 {
			panic(errors.New("failed to read length from memory"))
		}
		buf64, ok64 := i.module.Memory().Read(ptr62, len63)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok64 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str64 := string(buf64)
		value65 := VerbatimEntry{
			Id:            str46,
			Label:         str49,
			Snippet:       str52,
			Reason:        str55,
			AddedAt:       str58,
			ArchivedAt:    str61,
			ArchiveReason: str64,
		}
		result66[idx66] = value65
	}
	value67, ok67 := i.module.Memory().ReadUint32Le(uint32(results0 + 40))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok67 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result68 := uint32(value67)
	value69, ok69 := i.module.Memory().ReadUint32Le(uint32(results0 + 44))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok69 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result70 := uint32(value69)
	value71, ok71 := i.module.Memory().ReadUint32Le(uint32(results0 + 48))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok71 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result72 := uint32(value71)
	value73 := Snapshot{
		Progress:     value19,
		Learnings:    result41,
		Verbatim:     result66,
		NextLearning: result68,
		NextVerbatim: result70,
		Updates:      result72,
	}
	return value73
}

func (i *EngineGoInstance) MemoryUpdatePrompt(
	ctx context.Context,
	memory uint32,
	task string,
) string {
	arg0 := memory
	arg1 := task
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}
	raw1, err1 := i.module.ExportedFunction("memory-update-prompt").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_memory-update-prompt").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	ptr2, ok2 := i.module.Memory().ReadUint32Le(uint32(results1 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read length from memory"))
	}
	buf4, ok4 := i.module.Memory().Read(ptr2, len3)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok4 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str4 := string(buf4)
	return str4
}

func (i *EngineGoInstance) UpdateBegin(
	ctx context.Context,
	memory uint32,
	task string,
	maxReprompts uint32,
) (uint32, error) {
	arg0 := memory
	arg1 := task
	arg2 := maxReprompts
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	if err0 != nil {
		var default0 uint32
		return default0, err0
	}
	raw1, err1 := i.module.ExportedFunction("update-begin").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0), uint64(arg2))
	if err1 != nil {
		var default1 uint32
		return default1, err1
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_update-begin").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	if !ok2 {
		var default2 uint32
		return default2, errors.New("failed to read byte from memory")
	}
	var value8 uint32
	var err8 error
	switch value2 {
	case 0:
		value3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok3 {
			var default3 uint32
			return default3, errors.New("failed to read i32 from memory")
		}
		result4 := uint32(value3)
		value8 = result4
	case 1:
		ptr5, ok5 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok5 {
			var default5 uint32
			return default5, errors.New("failed to read pointer from memory")
		}
		len6, ok6 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok6 {
			var default6 uint32
			return default6, errors.New("failed to read length from memory")
		}
		buf7, ok7 := i.module.Memory().Read(ptr5, len6)
		if !ok7 {
			var default7 uint32
			return default7, errors.New("failed to read bytes from memory")
		}
		str7 := string(buf7)
		err8 = errors.New(str7)
	default:
		err8 = errors.New("invalid variant discriminant for expected")
	}
	return value8, err8
}

func (i *EngineGoInstance) UpdateRequest(
	ctx context.Context,
	run uint32,
) []Message {
	arg0 := run
	raw0, err0 := i.module.ExportedFunction("update-request").Call(ctx, uint64(arg0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_update-request").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	ptr1, ok1 := i.module.Memory().ReadUint32Le(uint32(results0 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok1 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read length from memory"))
	}
	base10 := ptr1
	len10 := len2
	result10 := make([]Message, len10)
	for idx10 := uint32(0); idx10 < len10; idx10++ {
		base := base10 + idx10*16
		ptr3, ok3 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok3 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len4, ok4 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok4 {
			panic(errors.New("failed to read length from memory"))
		}
		buf5, ok5 := i.module.Memory().Read(ptr3, len4)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok5 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str5 := string(buf5)
		ptr6, ok6 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok6 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len7, ok7 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok7 {
			panic(errors.New("failed to read length from memory"))
		}
		buf8, ok8 := i.module.Memory().Read(ptr6, len7)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok8 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str8 := string(buf8)
		value9 := Message{
			Role:    str5,
			Content: str8,
		}
		result10[idx10] = value9
	}
	return result10
}

func (i *EngineGoInstance) UpdateAnswer(
	ctx context.Context,
	run uint32,
	memory uint32,
	text string,
	now string,
	overview bool,
	state bool,
) UpdateStep {
	arg0 := run
	arg1 := memory
	arg2 := text
	arg3 := now
	arg4 := overview
	arg5 := state
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg2, memory0, realloc0)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, arg3, memory1, realloc1)
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}
	var value2 uint32
	if arg4 {
		value2 = 1
	} else {
		value2 = 0
	}
	var value3 uint32
	if arg5 {
		value3 = 1
	} else {
		value3 = 0
	}
	raw4, err4 := i.module.ExportedFunction("update-answer").Call(ctx, uint64(arg0), uint64(arg1), uint64(ptr0), uint64(len0), uint64(ptr1), uint64(len1), uint64(value2), uint64(value3))
	// The return type doesn't contain an error so we panic if one is encountered
	if err4 != nil {
		panic(err4)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_update-answer").Call(ctx, raw4...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results4 := raw4[0]
	ptr5, ok5 := i.module.Memory().ReadUint32Le(uint32(results4 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok5 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len6, ok6 := i.module.Memory().ReadUint32Le(uint32(results4 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok6 {
		panic(errors.New("failed to read length from memory"))
	}
	buf7, ok7 := i.module.Memory().Read(ptr5, len6)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok7 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str7 := string(buf7)
	value8, ok8 := i.module.Memory().ReadUint32Le(uint32(results4 + 8))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok8 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result9 := uint32(value8)
	ptr10, ok10 := i.module.Memory().ReadUint32Le(uint32(results4 + 12))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok10 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len11, ok11 := i.module.Memory().ReadUint32Le(uint32(results4 + 16))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok11 {
		panic(errors.New("failed to read length from memory"))
	}
	buf12, ok12 := i.module.Memory().Read(ptr10, len11)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok12 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str12 := string(buf12)
	ptr13, ok13 := i.module.Memory().ReadUint32Le(uint32(results4 + 20))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok13 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len14, ok14 := i.module.Memory().ReadUint32Le(uint32(results4 + 24))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok14 {
		panic(errors.New("failed to read length from memory"))
	}
	base18 := ptr13
	len18 := len14
	result18 := make([]string, len18)
	for idx18 := uint32(0); idx18 < len18; idx18++ {
		base := base18 + idx18*8
		ptr15, ok15 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok15 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len16, ok16 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok16 {
			panic(errors.New("failed to read length from memory"))
		}
		buf17, ok17 := i.module.Memory().Read(ptr15, len16)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok17 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str17 := string(buf17)
		result18[idx18] = str17
	}
	ptr19, ok19 := i.module.Memory().ReadUint32Le(uint32(results4 + 28))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok19 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len20, ok20 := i.module.Memory().ReadUint32Le(uint32(results4 + 32))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok20 {
		panic(errors.New("failed to read length from memory"))
	}
	base24 := ptr19
	len24 := len20
	result24 := make([]string, len24)
	for idx24 := uint32(0); idx24 < len24; idx24++ {
		base := base24 + idx24*8
		ptr21, ok21 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok21 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len22, ok22 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok22 {
			panic(errors.New("failed to read length from memory"))
		}
		buf23, ok23 := i.module.Memory().Read(ptr21, len22)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok23 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str23 := string(buf23)
		result24[idx24] = str23
	}
	ptr25, ok25 := i.module.Memory().ReadUint32Le(uint32(results4 + 36))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok25 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len26, ok26 := i.module.Memory().ReadUint32Le(uint32(results4 + 40))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok26 {
		panic(errors.New("failed to read length from memory"))
	}
	base30 := ptr25
	len30 := len26
	result30 := make([]string, len30)
	for idx30 := uint32(0); idx30 < len30; idx30++ {
		base := base30 + idx30*8
		ptr27, ok27 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len28, ok28 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read length from memory"))
		}
		buf29, ok29 := i.module.Memory().Read(ptr27, len28)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str29 := string(buf29)
		result30[idx30] = str29
	}
	ptr31, ok31 := i.module.Memory().ReadUint32Le(uint32(results4 + 44))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok31 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len32, ok32 := i.module.Memory().ReadUint32Le(uint32(results4 + 48))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok32 {
		panic(errors.New("failed to read length from memory"))
	}
	base44 := ptr31
	len44 := len32
	result44 := make([]Diagnostic, len44)
	for idx44 := uint32(0); idx44 < len44; idx44++ {
		base := base44 + idx44*24
		ptr33, ok33 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok33 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len34, ok34 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok34 {
			panic(errors.New("failed to read length from memory"))
		}
		buf35, ok35 := i.module.Memory().Read(ptr33, len34)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok35 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str35 := string(buf35)
		value36, ok36 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok36 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result37 := uint32(value36)
		value38, ok38 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok38 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result39 := uint32(value38)
		ptr40, ok40 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok40 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len41, ok41 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok41 {
			panic(errors.New("failed to read length from memory"))
		}
		buf42, ok42 := i.module.Memory().Read(ptr40, len41)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok42 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str42 := string(buf42)
		value43 := Diagnostic{
			Severity: str35,
			Line:     result37,
			Column:   result39,
			Message:  str42,
		}
		result44[idx44] = value43
	}
	ptr45, ok45 := i.module.Memory().ReadUint32Le(uint32(results4 + 52))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok45 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len46, ok46 := i.module.Memory().ReadUint32Le(uint32(results4 + 56))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok46 {
		panic(errors.New("failed to read length from memory"))
	}
	buf47, ok47 := i.module.Memory().Read(ptr45, len46)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok47 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str47 := string(buf47)
	ptr48, ok48 := i.module.Memory().ReadUint32Le(uint32(results4 + 60))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok48 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len49, ok49 := i.module.Memory().ReadUint32Le(uint32(results4 + 64))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok49 {
		panic(errors.New("failed to read length from memory"))
	}
	buf50, ok50 := i.module.Memory().Read(ptr48, len49)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok50 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str50 := string(buf50)
	ptr51, ok51 := i.module.Memory().ReadUint32Le(uint32(results4 + 68))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok51 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len52, ok52 := i.module.Memory().ReadUint32Le(uint32(results4 + 72))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok52 {
		panic(errors.New("failed to read length from memory"))
	}
	buf53, ok53 := i.module.Memory().Read(ptr51, len52)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok53 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str53 := string(buf53)
	value54 := Applied{
		Seq:      result9,
		Diff:     str12,
		Added:    result18,
		Archived: result24,
		Ignored:  result30,
		Warnings: result44,
		LogEntry: str47,
		Overview: str50,
		State:    str53,
	}
	ptr55, ok55 := i.module.Memory().ReadUint32Le(uint32(results4 + 76))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok55 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len56, ok56 := i.module.Memory().ReadUint32Le(uint32(results4 + 80))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok56 {
		panic(errors.New("failed to read length from memory"))
	}
	base68 := ptr55
	len68 := len56
	result68 := make([]Diagnostic, len68)
	for idx68 := uint32(0); idx68 < len68; idx68++ {
		base := base68 + idx68*24
		ptr57, ok57 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok57 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len58, ok58 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok58 {
			panic(errors.New("failed to read length from memory"))
		}
		buf59, ok59 := i.module.Memory().Read(ptr57, len58)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok59 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str59 := string(buf59)
		value60, ok60 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok60 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result61 := uint32(value60)
		value62, ok62 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok62 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result63 := uint32(value62)
		ptr64, ok64 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok64 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len65, ok65 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok65 {
			panic(errors.New("failed to read length from memory"))
		}
		buf66, ok66 := i.module.Memory().Read(ptr64, len65)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok66 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str66 := string(buf66)
		value67 := Diagnostic{
			Severity: str59,
			Line:     result61,
			Column:   result63,
			Message:  str66,
		}
		result68[idx68] = value67
	}
	value69 := UpdateStep{
		Kind:        str7,
		Applied:     value54,
		Diagnostics: result68,
	}
	return value69
}

func (i *EngineGoInstance) UpdateDrop(
	ctx context.Context,
	run uint32,
) error {
	arg0 := run
	raw0, err0 := i.module.ExportedFunction("update-drop").Call(ctx, uint64(arg0))
	if err0 != nil {
		return err0
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_update-drop").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	value1, ok1 := i.module.Memory().ReadByte(uint32(results0 + 0))
	if !ok1 {
		return errors.New("failed to read byte from memory")
	}
	var err5 error
	switch value1 {
	case 0:
	case 1:
		ptr2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
		if !ok2 {
			return errors.New("failed to read pointer from memory")
		}
		len3, ok3 := i.module.Memory().ReadUint32Le(uint32(results0 + 8))
		if !ok3 {
			return errors.New("failed to read length from memory")
		}
		buf4, ok4 := i.module.Memory().Read(ptr2, len3)
		if !ok4 {
			return errors.New("failed to read bytes from memory")
		}
		str4 := string(buf4)
		err5 = errors.New(str4)
	default:
		err5 = errors.New("invalid variant discriminant for expected")
	}
	return err5
}

func (i *EngineGoInstance) HistoryCompact(
	ctx context.Context,
	view []HistoryEntry,
	request CompactRequest,
) CompactStep {
	arg0 := view
	arg1 := request
	vec10 := arg0
	len10 := uint64(len(vec10))
	result10, err10 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len10*40)
	// The return type doesn't contain an error so we panic if one is encountered
	if err10 != nil {
		panic(err10)
	}
	ptr10 := result10[0]
	for idx := uint64(0); idx < len10; idx++ {
		e := vec10[idx]
		base := uint32(ptr10 + uint64(idx)*uint64(40))
		seq0 := e.Seq
		message0 := e.Message
		tokens0 := e.Tokens
		i.module.Memory().WriteUint32Le(base+0, seq0)
		role1 := message0.Role
		content1 := message0.Content
		toolCallId1 := message0.ToolCallId
		toolCalls1 := message0.ToolCalls
		memory2 := i.module.Memory()
		realloc2 := i.module.ExportedFunction("cabi_realloc")
		ptr2, len2, err2 := writeString(ctx, role1, memory2, realloc2)
		// The return type doesn't contain an error so we panic if one is encountered
		if err2 != nil {
			panic(err2)
		}
		i.module.Memory().WriteUint32Le(base+8, uint32(len2))
		i.module.Memory().WriteUint32Le(base+4, uint32(ptr2))
		memory3 := i.module.Memory()
		realloc3 := i.module.ExportedFunction("cabi_realloc")
		ptr3, len3, err3 := writeString(ctx, content1, memory3, realloc3)
		// The return type doesn't contain an error so we panic if one is encountered
		if err3 != nil {
			panic(err3)
		}
		i.module.Memory().WriteUint32Le(base+16, uint32(len3))
		i.module.Memory().WriteUint32Le(base+12, uint32(ptr3))
		memory4 := i.module.Memory()
		realloc4 := i.module.ExportedFunction("cabi_realloc")
		ptr4, len4, err4 := writeString(ctx, toolCallId1, memory4, realloc4)
		// The return type doesn't contain an error so we panic if one is encountered
		if err4 != nil {
			panic(err4)
		}
		i.module.Memory().WriteUint32Le(base+24, uint32(len4))
		i.module.Memory().WriteUint32Le(base+20, uint32(ptr4))
		vec9 := toolCalls1
		len9 := uint64(len(vec9))
		result9, err9 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len9*24)
		// The return type doesn't contain an error so we panic if one is encountered
		if err9 != nil {
			panic(err9)
		}
		ptr9 := result9[0]
		for idx := uint64(0); idx < len9; idx++ {
			e := vec9[idx]
			base := uint32(ptr9 + uint64(idx)*uint64(24))
			id5 := e.Id
			name5 := e.Name
			arguments5 := e.Arguments
			memory6 := i.module.Memory()
			realloc6 := i.module.ExportedFunction("cabi_realloc")
			ptr6, len6, err6 := writeString(ctx, id5, memory6, realloc6)
			// The return type doesn't contain an error so we panic if one is encountered
			if err6 != nil {
				panic(err6)
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len6))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr6))
			memory7 := i.module.Memory()
			realloc7 := i.module.ExportedFunction("cabi_realloc")
			ptr7, len7, err7 := writeString(ctx, name5, memory7, realloc7)
			// The return type doesn't contain an error so we panic if one is encountered
			if err7 != nil {
				panic(err7)
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len7))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr7))
			memory8 := i.module.Memory()
			realloc8 := i.module.ExportedFunction("cabi_realloc")
			ptr8, len8, err8 := writeString(ctx, arguments5, memory8, realloc8)
			// The return type doesn't contain an error so we panic if one is encountered
			if err8 != nil {
				panic(err8)
			}
			i.module.Memory().WriteUint32Le(base+20, uint32(len8))
			i.module.Memory().WriteUint32Le(base+16, uint32(ptr8))
		}
		i.module.Memory().WriteUint32Le(base+32, uint32(len9))
		i.module.Memory().WriteUint32Le(base+28, uint32(ptr9))
		i.module.Memory().WriteUint32Le(base+36, tokens0)
	}
	target11 := arg1.Target
	strategy11 := arg1.Strategy
	keepRecent11 := arg1.KeepRecent
	archiveTo11 := arg1.ArchiveTo
	archiveLines11 := arg1.ArchiveLines
	neverCompact11 := arg1.NeverCompact
	minFree11 := arg1.MinFree
	answered11 := arg1.Answered
	summary11 := arg1.Summary
	keep11 := arg1.Keep
	memory12 := i.module.Memory()
	realloc12 := i.module.ExportedFunction("cabi_realloc")
	ptr12, len12, err12 := writeString(ctx, archiveTo11, memory12, realloc12)
	// The return type doesn't contain an error so we panic if one is encountered
	if err12 != nil {
		panic(err12)
	}
	vec14 := neverCompact11
	len14 := uint64(len(vec14))
	result14, err14 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len14*8)
	// The return type doesn't contain an error so we panic if one is encountered
	if err14 != nil {
		panic(err14)
	}
	ptr14 := result14[0]
	for idx := uint64(0); idx < len14; idx++ {
		e := vec14[idx]
		base := uint32(ptr14 + uint64(idx)*uint64(8))
		memory13 := i.module.Memory()
		realloc13 := i.module.ExportedFunction("cabi_realloc")
		ptr13, len13, err13 := writeString(ctx, e, memory13, realloc13)
		// The return type doesn't contain an error so we panic if one is encountered
		if err13 != nil {
			panic(err13)
		}
		i.module.Memory().WriteUint32Le(base+4, uint32(len13))
		i.module.Memory().WriteUint32Le(base+0, uint32(ptr13))
	}
	var value15 uint32
	if answered11 {
		value15 = 1
	} else {
		value15 = 0
	}
	memory16 := i.module.Memory()
	realloc16 := i.module.ExportedFunction("cabi_realloc")
	ptr16, len16, err16 := writeString(ctx, summary11, memory16, realloc16)
	// The return type doesn't contain an error so we panic if one is encountered
	if err16 != nil {
		panic(err16)
	}
	vec17 := keep11
	len17 := uint64(len(vec17))
	result17, err17 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len17*4)
	// The return type doesn't contain an error so we panic if one is encountered
	if err17 != nil {
		panic(err17)
	}
	ptr17 := result17[0]
	for idx := uint64(0); idx < len17; idx++ {
		e := vec17[idx]
		base := uint32(ptr17 + uint64(idx)*uint64(4))
		i.module.Memory().WriteUint32Le(base+0, e)
	}
	raw18, err18 := i.module.ExportedFunction("history-compact").Call(ctx, uint64(ptr10), uint64(len10), uint64(target11), uint64(strategy11), uint64(keepRecent11), uint64(ptr12), uint64(len12), uint64(archiveLines11), uint64(ptr14), uint64(len14), uint64(minFree11), uint64(value15), uint64(ptr16), uint64(len16), uint64(ptr17), uint64(len17))
	// The return type doesn't contain an error so we panic if one is encountered
	if err18 != nil {
		panic(err18)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_history-compact").Call(ctx, raw18...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results18 := raw18[0]
	ptr19, ok19 := i.module.Memory().ReadUint32Le(uint32(results18 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok19 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len20, ok20 := i.module.Memory().ReadUint32Le(uint32(results18 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok20 {
		panic(errors.New("failed to read length from memory"))
	}
	buf21, ok21 := i.module.Memory().Read(ptr19, len20)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok21 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str21 := string(buf21)
	ptr22, ok22 := i.module.Memory().ReadUint32Le(uint32(results18 + 8))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok22 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len23, ok23 := i.module.Memory().ReadUint32Le(uint32(results18 + 12))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok23 {
		panic(errors.New("failed to read length from memory"))
	}
	base47 := ptr22
	len47 := len23
	result47 := make([]ChatMessage, len47)
	for idx47 := uint32(0); idx47 < len47; idx47++ {
		base := base47 + idx47*32
		ptr24, ok24 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok24 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len25, ok25 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok25 {
			panic(errors.New("failed to read length from memory"))
		}
		buf26, ok26 := i.module.Memory().Read(ptr24, len25)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str26 := string(buf26)
		ptr27, ok27 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len28, ok28 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read length from memory"))
		}
		buf29, ok29 := i.module.Memory().Read(ptr27, len28)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str29 := string(buf29)
		ptr30, ok30 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok30 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len31, ok31 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok31 {
			panic(errors.New("failed to read length from memory"))
		}
		buf32, ok32 := i.module.Memory().Read(ptr30, len31)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok32 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str32 := string(buf32)
		ptr33, ok33 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok33 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len34, ok34 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok34 {
			panic(errors.New("failed to read length from memory"))
		}
		base45 := ptr33
		len45 := len34
		result45 := make([]ToolCall, len45)
		for idx45 := uint32(0); idx45 < len45; idx45++ {
			base := base45 + idx45*24
			ptr35, ok35 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok35 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len36, ok36 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok36 {
				panic(errors.New("failed to read length from memory"))
			}
			buf37, ok37 := i.module.Memory().Read(ptr35, len36)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok37 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str37 := string(buf37)
			ptr38, ok38 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok38 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len39, ok39 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok39 {
				panic(errors.New("failed to read length from memory"))
			}
			buf40, ok40 := i.module.Memory().Read(ptr38, len39)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok40 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str40 := string(buf40)
			ptr41, ok41 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok41 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len42, ok42 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok42 {
				panic(errors.New("failed to read length from memory"))
			}
			buf43, ok43 := i.module.Memory().Read(ptr41, len42)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok43 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str43 := string(buf43)
			value44 := ToolCall{
				Id:        str37,
				Name:      str40,
				Arguments: str43,
			}
			result45[idx45] = value44
		}
		value46 := ChatMessage{
			Role:       str26,
			Content:    str29,
			ToolCallId: str32,
			ToolCalls:  result45,
		}
		result47[idx47] = value46
	}
	ptr48, ok48 := i.module.Memory().ReadUint32Le(uint32(results18 + 16))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok48 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len49, ok49 := i.module.Memory().ReadUint32Le(uint32(results18 + 20))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok49 {
		panic(errors.New("failed to read length from memory"))
	}
	base79 := ptr48
	len79 := len49
	result79 := make([]Replacement, len79)
	for idx79 := uint32(0); idx79 < len79; idx79++ {
		base := base79 + idx79*40
		ptr50, ok50 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok50 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len51, ok51 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok51 {
			panic(errors.New("failed to read length from memory"))
		}
		base54 := ptr50
		len54 := len51
		result54 := make([]uint32, len54)
		for idx54 := uint32(0); idx54 < len54; idx54++ {
			base := base54 + idx54*4
			value52, ok52 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok52 {
				panic(errors.New("failed to read i32 from memory"))
			}
			result53 := uint32(value52)
			result54[idx54] = result53
		}
		ptr55, ok55 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok55 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len56, ok56 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok56 {
			panic(errors.New("failed to read length from memory"))
		}
		buf57, ok57 := i.module.Memory().Read(ptr55, len56)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok57 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str57 := string(buf57)
		ptr58, ok58 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok58 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len59, ok59 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok59 {
			panic(errors.New("failed to read length from memory"))
		}
		buf60, ok60 := i.module.Memory().Read(ptr58, len59)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok60 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str60 := string(buf60)
		ptr61, ok61 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok61 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len62, ok62 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok62 {
			panic(errors.New("failed to read length from memory"))
		}
		buf63, ok63 := i.module.Memory().Read(ptr61, len62)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok63 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str63 := string(buf63)
		ptr64, ok64 := i.module.Memory().ReadUint32Le(uint32(base + 32))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok64 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len65, ok65 := i.module.Memory().ReadUint32Le(uint32(base + 36))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok65 {
			panic(errors.New("failed to read length from memory"))
		}
		base76 := ptr64
		len76 := len65
		result76 := make([]ToolCall, len76)
		for idx76 := uint32(0); idx76 < len76; idx76++ {
			base := base76 + idx76*24
			ptr66, ok66 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok66 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len67, ok67 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok67 {
				panic(errors.New("failed to read length from memory"))
			}
			buf68, ok68 := i.module.Memory().Read(ptr66, len67)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok68 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str68 := string(buf68)
			ptr69, ok69 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok69 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len70, ok70 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok70 {
				panic(errors.New("failed to read length from memory"))
			}
			buf71, ok71 := i.module.Memory().Read(ptr69, len70)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok71 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str71 := string(buf71)
			ptr72, ok72 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok72 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len73, ok73 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok73 {
				panic(errors.New("failed to read length from memory"))
			}
			buf74, ok74 := i.module.Memory().Read(ptr72, len73)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok74 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str74 := string(buf74)
			value75 := ToolCall{
				Id:        str68,
				Name:      str71,
				Arguments: str74,
			}
			result76[idx76] = value75
		}
		value77 := ChatMessage{
			Role:       str57,
			Content:    str60,
			ToolCallId: str63,
			ToolCalls:  result76,
		}
		value78 := Replacement{
			Replaces: result54,
			Message:  value77,
		}
		result79[idx79] = value78
	}
	ptr80, ok80 := i.module.Memory().ReadUint32Le(uint32(results18 + 24))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok80 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len81, ok81 := i.module.Memory().ReadUint32Le(uint32(results18 + 28))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok81 {
		panic(errors.New("failed to read length from memory"))
	}
	buf82, ok82 := i.module.Memory().Read(ptr80, len81)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok82 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str82 := string(buf82)
	ptr83, ok83 := i.module.Memory().ReadUint32Le(uint32(results18 + 32))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok83 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len84, ok84 := i.module.Memory().ReadUint32Le(uint32(results18 + 36))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok84 {
		panic(errors.New("failed to read length from memory"))
	}
	base113 := ptr83
	len113 := len84
	result113 := make([]HistoryEntry, len113)
	for idx113 := uint32(0); idx113 < len113; idx113++ {
		base := base113 + idx113*40
		value85, ok85 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok85 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result86 := uint32(value85)
		ptr87, ok87 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok87 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len88, ok88 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok88 {
			panic(errors.New("failed to read length from memory"))
		}
		buf89, ok89 := i.module.Memory().Read(ptr87, len88)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok89 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str89 := string(buf89)
		ptr90, ok90 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok90 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len91, ok91 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok91 {
			panic(errors.New("failed to read length from memory"))
		}
		buf92, ok92 := i.module.Memory().Read(ptr90, len91)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok92 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str92 := string(buf92)
		ptr93, ok93 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok93 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len94, ok94 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok94 {
			panic(errors.New("failed to read length from memory"))
		}
		buf95, ok95 := i.module.Memory().Read(ptr93, len94)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok95 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str95 := string(buf95)
		ptr96, ok96 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok96 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len97, ok97 := i.module.Memory().ReadUint32Le(uint32(base + 32))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok97 {
			panic(errors.New("failed to read length from memory"))
		}
		base108 := ptr96
		len108 := len97
		result108 := make([]ToolCall, len108)
		for idx108 := uint32(0); idx108 < len108; idx108++ {
			base := base108 + idx108*24
			ptr98, ok98 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok98 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len99, ok99 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok99 {
				panic(errors.New("failed to read length from memory"))
			}
			buf100, ok100 := i.module.Memory().Read(ptr98, len99)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok100 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str100 := string(buf100)
			ptr101, ok101 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok101 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len102, ok102 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok102 {
				panic(errors.New("failed to read length from memory"))
			}
			buf103, ok103 := i.module.Memory().Read(ptr101, len102)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok103 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str103 := string(buf103)
			ptr104, ok104 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok104 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len105, ok105 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok105 {
				panic(errors.New("failed to read length from memory"))
			}
			buf106, ok106 := i.module.Memory().Read(ptr104, len105)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok106 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str106 := string(buf106)
			value107 := ToolCall{
				Id:        str100,
				Name:      str103,
				Arguments: str106,
			}
			result108[idx108] = value107
		}
		value109 := ChatMessage{
			Role:       str89,
			Content:    str92,
			ToolCallId: str95,
			ToolCalls:  result108,
		}
		value110, ok110 := i.module.Memory().ReadUint32Le(uint32(base + 36))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok110 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result111 := uint32(value110)
		value112 := HistoryEntry{
			Seq:     result86,
			Message: value109,
			Tokens:  result111,
		}
		result113[idx113] = value112
	}
	value114, ok114 := i.module.Memory().ReadUint32Le(uint32(results18 + 40))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok114 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result115 := uint32(value114)
	value116, ok116 := i.module.Memory().ReadUint32Le(uint32(results18 + 44))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok116 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result117 := uint32(value116)
	value118, ok118 := i.module.Memory().ReadUint32Le(uint32(results18 + 48))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok118 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result119 := uint32(value118)
	ptr120, ok120 := i.module.Memory().ReadUint32Le(uint32(results18 + 52))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok120 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len121, ok121 := i.module.Memory().ReadUint32Le(uint32(results18 + 56))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok121 {
		panic(errors.New("failed to read length from memory"))
	}
	buf122, ok122 := i.module.Memory().Read(ptr120, len121)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok122 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str122 := string(buf122)
	value123 := Compaction{
		Replacements: result79,
		Archive:      str82,
		View:         result113,
		Messages:     result115,
		TokensBefore: result117,
		TokensAfter:  result119,
		Notice:       str122,
	}
	ptr124, ok124 := i.module.Memory().ReadUint32Le(uint32(results18 + 60))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok124 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len125, ok125 := i.module.Memory().ReadUint32Le(uint32(results18 + 64))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok125 {
		panic(errors.New("failed to read length from memory"))
	}
	buf126, ok126 := i.module.Memory().Read(ptr124, len125)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok126 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str126 := string(buf126)
	value127 := CompactStep{
		Kind:       str21,
		Ask:        result47,
		Compaction: value123,
		Error:      str126,
	}
	return value127
}

func (i *EngineGoInstance) HistoryFallback(
	ctx context.Context,
	view []HistoryEntry,
	request FallbackRequest,
) FallbackOutcome {
	arg0 := view
	arg1 := request
	vec10 := arg0
	len10 := uint64(len(vec10))
	result10, err10 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len10*40)
	// The return type doesn't contain an error so we panic if one is encountered
	if err10 != nil {
		panic(err10)
	}
	ptr10 := result10[0]
	for idx := uint64(0); idx < len10; idx++ {
		e := vec10[idx]
		base := uint32(ptr10 + uint64(idx)*uint64(40))
		seq0 := e.Seq
		message0 := e.Message
		tokens0 := e.Tokens
		i.module.Memory().WriteUint32Le(base+0, seq0)
		role1 := message0.Role
		content1 := message0.Content
		toolCallId1 := message0.ToolCallId
		toolCalls1 := message0.ToolCalls
		memory2 := i.module.Memory()
		realloc2 := i.module.ExportedFunction("cabi_realloc")
		ptr2, len2, err2 := writeString(ctx, role1, memory2, realloc2)
		// The return type doesn't contain an error so we panic if one is encountered
		if err2 != nil {
			panic(err2)
		}
		i.module.Memory().WriteUint32Le(base+8, uint32(len2))
		i.module.Memory().WriteUint32Le(base+4, uint32(ptr2))
		memory3 := i.module.Memory()
		realloc3 := i.module.ExportedFunction("cabi_realloc")
		ptr3, len3, err3 := writeString(ctx, content1, memory3, realloc3)
		// The return type doesn't contain an error so we panic if one is encountered
		if err3 != nil {
			panic(err3)
		}
		i.module.Memory().WriteUint32Le(base+16, uint32(len3))
		i.module.Memory().WriteUint32Le(base+12, uint32(ptr3))
		memory4 := i.module.Memory()
		realloc4 := i.module.ExportedFunction("cabi_realloc")
		ptr4, len4, err4 := writeString(ctx, toolCallId1, memory4, realloc4)
		// The return type doesn't contain an error so we panic if one is encountered
		if err4 != nil {
			panic(err4)
		}
		i.module.Memory().WriteUint32Le(base+24, uint32(len4))
		i.module.Memory().WriteUint32Le(base+20, uint32(ptr4))
		vec9 := toolCalls1
		len9 := uint64(len(vec9))
		result9, err9 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len9*24)
		// The return type doesn't contain an error so we panic if one is encountered
		if err9 != nil {
			panic(err9)
		}
		ptr9 := result9[0]
		for idx := uint64(0); idx < len9; idx++ {
			e := vec9[idx]
			base := uint32(ptr9 + uint64(idx)*uint64(24))
			id5 := e.Id
			name5 := e.Name
			arguments5 := e.Arguments
			memory6 := i.module.Memory()
			realloc6 := i.module.ExportedFunction("cabi_realloc")
			ptr6, len6, err6 := writeString(ctx, id5, memory6, realloc6)
			// The return type doesn't contain an error so we panic if one is encountered
			if err6 != nil {
				panic(err6)
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len6))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr6))
			memory7 := i.module.Memory()
			realloc7 := i.module.ExportedFunction("cabi_realloc")
			ptr7, len7, err7 := writeString(ctx, name5, memory7, realloc7)
			// The return type doesn't contain an error so we panic if one is encountered
			if err7 != nil {
				panic(err7)
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len7))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr7))
			memory8 := i.module.Memory()
			realloc8 := i.module.ExportedFunction("cabi_realloc")
			ptr8, len8, err8 := writeString(ctx, arguments5, memory8, realloc8)
			// The return type doesn't contain an error so we panic if one is encountered
			if err8 != nil {
				panic(err8)
			}
			i.module.Memory().WriteUint32Le(base+20, uint32(len8))
			i.module.Memory().WriteUint32Le(base+16, uint32(ptr8))
		}
		i.module.Memory().WriteUint32Le(base+32, uint32(len9))
		i.module.Memory().WriteUint32Le(base+28, uint32(ptr9))
		i.module.Memory().WriteUint32Le(base+36, tokens0)
	}
	used11 := arg1.Used
	threshold11 := arg1.Threshold
	goal11 := arg1.Goal
	keepRecent11 := arg1.KeepRecent
	archiveTo11 := arg1.ArchiveTo
	archiveLines11 := arg1.ArchiveLines
	neverCompact11 := arg1.NeverCompact
	keep11 := arg1.Keep
	memory12 := i.module.Memory()
	realloc12 := i.module.ExportedFunction("cabi_realloc")
	ptr12, len12, err12 := writeString(ctx, archiveTo11, memory12, realloc12)
	// The return type doesn't contain an error so we panic if one is encountered
	if err12 != nil {
		panic(err12)
	}
	vec14 := neverCompact11
	len14 := uint64(len(vec14))
	result14, err14 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len14*8)
	// The return type doesn't contain an error so we panic if one is encountered
	if err14 != nil {
		panic(err14)
	}
	ptr14 := result14[0]
	for idx := uint64(0); idx < len14; idx++ {
		e := vec14[idx]
		base := uint32(ptr14 + uint64(idx)*uint64(8))
		memory13 := i.module.Memory()
		realloc13 := i.module.ExportedFunction("cabi_realloc")
		ptr13, len13, err13 := writeString(ctx, e, memory13, realloc13)
		// The return type doesn't contain an error so we panic if one is encountered
		if err13 != nil {
			panic(err13)
		}
		i.module.Memory().WriteUint32Le(base+4, uint32(len13))
		i.module.Memory().WriteUint32Le(base+0, uint32(ptr13))
	}
	vec15 := keep11
	len15 := uint64(len(vec15))
	result15, err15 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len15*4)
	// The return type doesn't contain an error so we panic if one is encountered
	if err15 != nil {
		panic(err15)
	}
	ptr15 := result15[0]
	for idx := uint64(0); idx < len15; idx++ {
		e := vec15[idx]
		base := uint32(ptr15 + uint64(idx)*uint64(4))
		i.module.Memory().WriteUint32Le(base+0, e)
	}
	raw16, err16 := i.module.ExportedFunction("history-fallback").Call(ctx, uint64(ptr10), uint64(len10), uint64(used11), uint64(threshold11), uint64(goal11), uint64(keepRecent11), uint64(ptr12), uint64(len12), uint64(archiveLines11), uint64(ptr14), uint64(len14), uint64(ptr15), uint64(len15))
	// The return type doesn't contain an error so we panic if one is encountered
	if err16 != nil {
		panic(err16)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_history-fallback").Call(ctx, raw16...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results16 := raw16[0]
	value17, ok17 := i.module.Memory().ReadByte(uint32(results16 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok17 {
		panic(errors.New("failed to read byte from memory"))
	}
	value18 := value17 != 0
	ptr19, ok19 := i.module.Memory().ReadUint32Le(uint32(results16 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok19 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len20, ok20 := i.module.Memory().ReadUint32Le(uint32(results16 + 8))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok20 {
		panic(errors.New("failed to read length from memory"))
	}
	base50 := ptr19
	len50 := len20
	result50 := make([]Replacement, len50)
	for idx50 := uint32(0); idx50 < len50; idx50++ {
		base := base50 + idx50*40
		ptr21, ok21 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok21 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len22, ok22 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok22 {
			panic(errors.New("failed to read length from memory"))
		}
		base25 := ptr21
		len25 := len22
		result25 := make([]uint32, len25)
		for idx25 := uint32(0); idx25 < len25; idx25++ {
			base := base25 + idx25*4
			value23, ok23 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok23 {
				panic(errors.New("failed to read i32 from memory"))
			}
			result24 := uint32(value23)
			result25[idx25] = result24
		}
		ptr26, ok26 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len27, ok27 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read length from memory"))
		}
		buf28, ok28 := i.module.Memory().Read(ptr26, len27)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str28 := string(buf28)
		ptr29, ok29 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len30, ok30 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok30 {
			panic(errors.New("failed to read length from memory"))
		}
		buf31, ok31 := i.module.Memory().Read(ptr29, len30)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok31 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str31 := string(buf31)
		ptr32, ok32 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok32 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len33, ok33 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok33 {
			panic(errors.New("failed to read length from memory"))
		}
		buf34, ok34 := i.module.Memory().Read(ptr32, len33)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok34 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str34 := string(buf34)
		ptr35, ok35 := i.module.Memory().ReadUint32Le(uint32(base + 32))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok35 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len36, ok36 := i.module.Memory().ReadUint32Le(uint32(base + 36))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok36 {
			panic(errors.New("failed to read length from memory"))
		}
		base47 := ptr35
		len47 := len36
		result47 := make([]ToolCall, len47)
		for idx47 := uint32(0); idx47 < len47; idx47++ {
			base := base47 + idx47*24
			ptr37, ok37 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok37 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len38, ok38 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok38 {
				panic(errors.New("failed to read length from memory"))
			}
			buf39, ok39 := i.module.Memory().Read(ptr37, len38)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok39 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str39 := string(buf39)
			ptr40, ok40 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok40 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len41, ok41 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok41 {
				panic(errors.New("failed to read length from memory"))
			}
			buf42, ok42 := i.module.Memory().Read(ptr40, len41)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok42 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str42 := string(buf42)
			ptr43, ok43 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok43 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len44, ok44 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok44 {
				panic(errors.New("failed to read length from memory"))
			}
			buf45, ok45 := i.module.Memory().Read(ptr43, len44)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok45 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str45 := string(buf45)
			value46 := ToolCall{
				Id:        str39,
				Name:      str42,
				Arguments: str45,
			}
			result47[idx47] = value46
		}
		value48 := ChatMessage{
			Role:       str28,
			Content:    str31,
			ToolCallId: str34,
			ToolCalls:  result47,
		}
		value49 := Replacement{
			Replaces: result25,
			Message:  value48,
		}
		result50[idx50] = value49
	}
	ptr51, ok51 := i.module.Memory().ReadUint32Le(uint32(results16 + 12))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok51 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len52, ok52 := i.module.Memory().ReadUint32Le(uint32(results16 + 16))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok52 {
		panic(errors.New("failed to read length from memory"))
	}
	buf53, ok53 := i.module.Memory().Read(ptr51, len52)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok53 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str53 := string(buf53)
	ptr54, ok54 := i.module.Memory().ReadUint32Le(uint32(results16 + 20))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok54 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len55, ok55 := i.module.Memory().ReadUint32Le(uint32(results16 + 24))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok55 {
		panic(errors.New("failed to read length from memory"))
	}
	base84 := ptr54
	len84 := len55
	result84 := make([]HistoryEntry, len84)
	for idx84 := uint32(0); idx84 < len84; idx84++ {
		base := base84 + idx84*40
		value56, ok56 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok56 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result57 := uint32(value56)
		ptr58, ok58 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok58 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len59, ok59 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok59 {
			panic(errors.New("failed to read length from memory"))
		}
		buf60, ok60 := i.module.Memory().Read(ptr58, len59)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok60 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str60 := string(buf60)
		ptr61, ok61 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok61 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len62, ok62 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok62 {
			panic(errors.New("failed to read length from memory"))
		}
		buf63, ok63 := i.module.Memory().Read(ptr61, len62)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok63 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str63 := string(buf63)
		ptr64, ok64 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok64 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len65, ok65 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok65 {
			panic(errors.New("failed to read length from memory"))
		}
		buf66, ok66 := i.module.Memory().Read(ptr64, len65)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok66 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str66 := string(buf66)
		ptr67, ok67 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok67 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len68, ok68 := i.module.Memory().ReadUint32Le(uint32(base + 32))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok68 {
			panic(errors.New("failed to read length from memory"))
		}
		base79 := ptr67
		len79 := len68
		result79 := make([]ToolCall, len79)
		for idx79 := uint32(0); idx79 < len79; idx79++ {
			base := base79 + idx79*24
			ptr69, ok69 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok69 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len70, ok70 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok70 {
				panic(errors.New("failed to read length from memory"))
			}
			buf71, ok71 := i.module.Memory().Read(ptr69, len70)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok71 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str71 := string(buf71)
			ptr72, ok72 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok72 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len73, ok73 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok73 {
				panic(errors.New("failed to read length from memory"))
			}
			buf74, ok74 := i.module.Memory().Read(ptr72, len73)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok74 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str74 := string(buf74)
			ptr75, ok75 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok75 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len76, ok76 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok76 {
				panic(errors.New("failed to read length from memory"))
			}
			buf77, ok77 := i.module.Memory().Read(ptr75, len76)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok77 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str77 := string(buf77)
			value78 := ToolCall{
				Id:        str71,
				Name:      str74,
				Arguments: str77,
			}
			result79[idx79] = value78
		}
		value80 := ChatMessage{
			Role:       str60,
			Content:    str63,
			ToolCallId: str66,
			ToolCalls:  result79,
		}
		value81, ok81 := i.module.Memory().ReadUint32Le(uint32(base + 36))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok81 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result82 := uint32(value81)
		value83 := HistoryEntry{
			Seq:     result57,
			Message: value80,
			Tokens:  result82,
		}
		result84[idx84] = value83
	}
	value85, ok85 := i.module.Memory().ReadUint32Le(uint32(results16 + 28))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok85 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result86 := uint32(value85)
	value87, ok87 := i.module.Memory().ReadUint32Le(uint32(results16 + 32))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok87 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result88 := uint32(value87)
	value89, ok89 := i.module.Memory().ReadUint32Le(uint32(results16 + 36))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok89 {
		panic(errors.New("failed to read i32 from memory"))
	}
	result90 := uint32(value89)
	ptr91, ok91 := i.module.Memory().ReadUint32Le(uint32(results16 + 40))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok91 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len92, ok92 := i.module.Memory().ReadUint32Le(uint32(results16 + 44))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok92 {
		panic(errors.New("failed to read length from memory"))
	}
	buf93, ok93 := i.module.Memory().Read(ptr91, len92)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok93 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str93 := string(buf93)
	value94 := Compaction{
		Replacements: result50,
		Archive:      str53,
		View:         result84,
		Messages:     result86,
		TokensBefore: result88,
		TokensAfter:  result90,
		Notice:       str93,
	}
	value95 := FallbackOutcome{
		Compacted:  value18,
		Compaction: value94,
	}
	return value95
}

func (i *EngineGoInstance) HistoryApplyReplacements(
	ctx context.Context,
	view []HistoryEntry,
	replacements []Replacement,
) []HistoryEntry {
	arg0 := view
	arg1 := replacements
	vec10 := arg0
	len10 := uint64(len(vec10))
	result10, err10 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len10*40)
	// The return type doesn't contain an error so we panic if one is encountered
	if err10 != nil {
		panic(err10)
	}
	ptr10 := result10[0]
	for idx := uint64(0); idx < len10; idx++ {
		e := vec10[idx]
		base := uint32(ptr10 + uint64(idx)*uint64(40))
		seq0 := e.Seq
		message0 := e.Message
		tokens0 := e.Tokens
		i.module.Memory().WriteUint32Le(base+0, seq0)
		role1 := message0.Role
		content1 := message0.Content
		toolCallId1 := message0.ToolCallId
		toolCalls1 := message0.ToolCalls
		memory2 := i.module.Memory()
		realloc2 := i.module.ExportedFunction("cabi_realloc")
		ptr2, len2, err2 := writeString(ctx, role1, memory2, realloc2)
		// The return type doesn't contain an error so we panic if one is encountered
		if err2 != nil {
			panic(err2)
		}
		i.module.Memory().WriteUint32Le(base+8, uint32(len2))
		i.module.Memory().WriteUint32Le(base+4, uint32(ptr2))
		memory3 := i.module.Memory()
		realloc3 := i.module.ExportedFunction("cabi_realloc")
		ptr3, len3, err3 := writeString(ctx, content1, memory3, realloc3)
		// The return type doesn't contain an error so we panic if one is encountered
		if err3 != nil {
			panic(err3)
		}
		i.module.Memory().WriteUint32Le(base+16, uint32(len3))
		i.module.Memory().WriteUint32Le(base+12, uint32(ptr3))
		memory4 := i.module.Memory()
		realloc4 := i.module.ExportedFunction("cabi_realloc")
		ptr4, len4, err4 := writeString(ctx, toolCallId1, memory4, realloc4)
		// The return type doesn't contain an error so we panic if one is encountered
		if err4 != nil {
			panic(err4)
		}
		i.module.Memory().WriteUint32Le(base+24, uint32(len4))
		i.module.Memory().WriteUint32Le(base+20, uint32(ptr4))
		vec9 := toolCalls1
		len9 := uint64(len(vec9))
		result9, err9 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len9*24)
		// The return type doesn't contain an error so we panic if one is encountered
		if err9 != nil {
			panic(err9)
		}
		ptr9 := result9[0]
		for idx := uint64(0); idx < len9; idx++ {
			e := vec9[idx]
			base := uint32(ptr9 + uint64(idx)*uint64(24))
			id5 := e.Id
			name5 := e.Name
			arguments5 := e.Arguments
			memory6 := i.module.Memory()
			realloc6 := i.module.ExportedFunction("cabi_realloc")
			ptr6, len6, err6 := writeString(ctx, id5, memory6, realloc6)
			// The return type doesn't contain an error so we panic if one is encountered
			if err6 != nil {
				panic(err6)
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len6))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr6))
			memory7 := i.module.Memory()
			realloc7 := i.module.ExportedFunction("cabi_realloc")
			ptr7, len7, err7 := writeString(ctx, name5, memory7, realloc7)
			// The return type doesn't contain an error so we panic if one is encountered
			if err7 != nil {
				panic(err7)
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len7))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr7))
			memory8 := i.module.Memory()
			realloc8 := i.module.ExportedFunction("cabi_realloc")
			ptr8, len8, err8 := writeString(ctx, arguments5, memory8, realloc8)
			// The return type doesn't contain an error so we panic if one is encountered
			if err8 != nil {
				panic(err8)
			}
			i.module.Memory().WriteUint32Le(base+20, uint32(len8))
			i.module.Memory().WriteUint32Le(base+16, uint32(ptr8))
		}
		i.module.Memory().WriteUint32Le(base+32, uint32(len9))
		i.module.Memory().WriteUint32Le(base+28, uint32(ptr9))
		i.module.Memory().WriteUint32Le(base+36, tokens0)
	}
	vec22 := arg1
	len22 := uint64(len(vec22))
	result22, err22 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len22*40)
	// The return type doesn't contain an error so we panic if one is encountered
	if err22 != nil {
		panic(err22)
	}
	ptr22 := result22[0]
	for idx := uint64(0); idx < len22; idx++ {
		e := vec22[idx]
		base := uint32(ptr22 + uint64(idx)*uint64(40))
		replaces11 := e.Replaces
		message11 := e.Message
		vec12 := replaces11
		len12 := uint64(len(vec12))
		result12, err12 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len12*4)
		// The return type doesn't contain an error so we panic if one is encountered
		if err12 != nil {
			panic(err12)
		}
		ptr12 := result12[0]
		for idx := uint64(0); idx < len12; idx++ {
			e := vec12[idx]
			base := uint32(ptr12 + uint64(idx)*uint64(4))
			i.module.Memory().WriteUint32Le(base+0, e)
		}
		i.module.Memory().WriteUint32Le(base+4, uint32(len12))
		i.module.Memory().WriteUint32Le(base+0, uint32(ptr12))
		role13 := message11.Role
		content13 := message11.Content
		toolCallId13 := message11.ToolCallId
		toolCalls13 := message11.ToolCalls
		memory14 := i.module.Memory()
		realloc14 := i.module.ExportedFunction("cabi_realloc")
		ptr14, len14, err14 := writeString(ctx, role13, memory14, realloc14)
		// The return type doesn't contain an error so we panic if one is encountered
		if err14 != nil {
			panic(err14)
		}
		i.module.Memory().WriteUint32Le(base+12, uint32(len14))
		i.module.Memory().WriteUint32Le(base+8, uint32(ptr14))
		memory15 := i.module.Memory()
		realloc15 := i.module.ExportedFunction("cabi_realloc")
		ptr15, len15, err15 := writeString(ctx, content13, memory15, realloc15)
		// The return type doesn't contain an error so we panic if one is encountered
		if err15 != nil {
			panic(err15)
		}
		i.module.Memory().WriteUint32Le(base+20, uint32(len15))
		i.module.Memory().WriteUint32Le(base+16, uint32(ptr15))
		memory16 := i.module.Memory()
		realloc16 := i.module.ExportedFunction("cabi_realloc")
		ptr16, len16, err16 := writeString(ctx, toolCallId13, memory16, realloc16)
		// The return type doesn't contain an error so we panic if one is encountered
		if err16 != nil {
			panic(err16)
		}
		i.module.Memory().WriteUint32Le(base+28, uint32(len16))
		i.module.Memory().WriteUint32Le(base+24, uint32(ptr16))
		vec21 := toolCalls13
		len21 := uint64(len(vec21))
		result21, err21 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len21*24)
		// The return type doesn't contain an error so we panic if one is encountered
		if err21 != nil {
			panic(err21)
		}
		ptr21 := result21[0]
		for idx := uint64(0); idx < len21; idx++ {
			e := vec21[idx]
			base := uint32(ptr21 + uint64(idx)*uint64(24))
			id17 := e.Id
			name17 := e.Name
			arguments17 := e.Arguments
			memory18 := i.module.Memory()
			realloc18 := i.module.ExportedFunction("cabi_realloc")
			ptr18, len18, err18 := writeString(ctx, id17, memory18, realloc18)
			// The return type doesn't contain an error so we panic if one is encountered
			if err18 != nil {
				panic(err18)
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len18))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr18))
			memory19 := i.module.Memory()
			realloc19 := i.module.ExportedFunction("cabi_realloc")
			ptr19, len19, err19 := writeString(ctx, name17, memory19, realloc19)
			// The return type doesn't contain an error so we panic if one is encountered
			if err19 != nil {
				panic(err19)
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len19))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr19))
			memory20 := i.module.Memory()
			realloc20 := i.module.ExportedFunction("cabi_realloc")
			ptr20, len20, err20 := writeString(ctx, arguments17, memory20, realloc20)
			// The return type doesn't contain an error so we panic if one is encountered
			if err20 != nil {
				panic(err20)
			}
			i.module.Memory().WriteUint32Le(base+20, uint32(len20))
			i.module.Memory().WriteUint32Le(base+16, uint32(ptr20))
		}
		i.module.Memory().WriteUint32Le(base+36, uint32(len21))
		i.module.Memory().WriteUint32Le(base+32, uint32(ptr21))
	}
	raw23, err23 := i.module.ExportedFunction("history-apply-replacements").Call(ctx, uint64(ptr10), uint64(len10), uint64(ptr22), uint64(len22))
	// The return type doesn't contain an error so we panic if one is encountered
	if err23 != nil {
		panic(err23)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_history-apply-replacements").Call(ctx, raw23...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results23 := raw23[0]
	ptr24, ok24 := i.module.Memory().ReadUint32Le(uint32(results23 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok24 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len25, ok25 := i.module.Memory().ReadUint32Le(uint32(results23 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok25 {
		panic(errors.New("failed to read length from memory"))
	}
	base54 := ptr24
	len54 := len25
	result54 := make([]HistoryEntry, len54)
	for idx54 := uint32(0); idx54 < len54; idx54++ {
		base := base54 + idx54*40
		value26, ok26 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result27 := uint32(value26)
		ptr28, ok28 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len29, ok29 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read length from memory"))
		}
		buf30, ok30 := i.module.Memory().Read(ptr28, len29)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok30 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str30 := string(buf30)
		ptr31, ok31 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok31 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len32, ok32 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok32 {
			panic(errors.New("failed to read length from memory"))
		}
		buf33, ok33 := i.module.Memory().Read(ptr31, len32)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok33 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str33 := string(buf33)
		ptr34, ok34 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok34 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len35, ok35 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok35 {
			panic(errors.New("failed to read length from memory"))
		}
		buf36, ok36 := i.module.Memory().Read(ptr34, len35)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok36 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str36 := string(buf36)
		ptr37, ok37 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok37 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len38, ok38 := i.module.Memory().ReadUint32Le(uint32(base + 32))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok38 {
			panic(errors.New("failed to read length from memory"))
		}
		base49 := ptr37
		len49 := len38
		result49 := make([]ToolCall, len49)
		for idx49 := uint32(0); idx49 < len49; idx49++ {
			base := base49 + idx49*24
			ptr39, ok39 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok39 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len40, ok40 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok40 {
				panic(errors.New("failed to read length from memory"))
			}
			buf41, ok41 := i.module.Memory().Read(ptr39, len40)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok41 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str41 := string(buf41)
			ptr42, ok42 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok42 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len43, ok43 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok43 {
				panic(errors.New("failed to read length from memory"))
			}
			buf44, ok44 := i.module.Memory().Read(ptr42, len43)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok44 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str44 := string(buf44)
			ptr45, ok45 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok45 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len46, ok46 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok46 {
				panic(errors.New("failed to read length from memory"))
			}
			buf47, ok47 := i.module.Memory().Read(ptr45, len46)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok47 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str47 := string(buf47)
			value48 := ToolCall{
				Id:        str41,
				Name:      str44,
				Arguments: str47,
			}
			result49[idx49] = value48
		}
		value50 := ChatMessage{
			Role:       str30,
			Content:    str33,
			ToolCallId: str36,
			ToolCalls:  result49,
		}
		value51, ok51 := i.module.Memory().ReadUint32Le(uint32(base + 36))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok51 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result52 := uint32(value51)
		value53 := HistoryEntry{
			Seq:     result27,
			Message: value50,
			Tokens:  result52,
		}
		result54[idx54] = value53
	}
	return result54
}

func (i *EngineGoInstance) ContextAssemble(
	ctx context.Context,
	request ContextRequest,
) []ChatMessage {
	arg0 := request
	systemPrompt0 := arg0.SystemPrompt
	agentsMd0 := arg0.AgentsMd
	overview0 := arg0.Overview
	history0 := arg0.History
	activeTurn0 := arg0.ActiveTurn
	historyMode0 := arg0.HistoryMode
	lastN0 := arg0.LastN
	overviewPath0 := arg0.OverviewPath
	detailPath0 := arg0.DetailPath
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, systemPrompt0, memory1, realloc1)
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}
	memory2 := i.module.Memory()
	realloc2 := i.module.ExportedFunction("cabi_realloc")
	ptr2, len2, err2 := writeString(ctx, agentsMd0, memory2, realloc2)
	// The return type doesn't contain an error so we panic if one is encountered
	if err2 != nil {
		panic(err2)
	}
	memory3 := i.module.Memory()
	realloc3 := i.module.ExportedFunction("cabi_realloc")
	ptr3, len3, err3 := writeString(ctx, overview0, memory3, realloc3)
	// The return type doesn't contain an error so we panic if one is encountered
	if err3 != nil {
		panic(err3)
	}
	vec13 := history0
	len13 := uint64(len(vec13))
	result13, err13 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len13*32)
	// The return type doesn't contain an error so we panic if one is encountered
	if err13 != nil {
		panic(err13)
	}
	ptr13 := result13[0]
	for idx := uint64(0); idx < len13; idx++ {
		e := vec13[idx]
		base := uint32(ptr13 + uint64(idx)*uint64(32))
		role4 := e.Role
		content4 := e.Content
		toolCallId4 := e.ToolCallId
		toolCalls4 := e.ToolCalls
		memory5 := i.module.Memory()
		realloc5 := i.module.ExportedFunction("cabi_realloc")
		ptr5, len5, err5 := writeString(ctx, role4, memory5, realloc5)
		// The return type doesn't contain an error so we panic if one is encountered
		if err5 != nil {
			panic(err5)
		}
		i.module.Memory().WriteUint32Le(base+4, uint32(len5))
		i.module.Memory().WriteUint32Le(base+0, uint32(ptr5))
		memory6 := i.module.Memory()
		realloc6 := i.module.ExportedFunction("cabi_realloc")
		ptr6, len6, err6 := writeString(ctx, content4, memory6, realloc6)
		// The return type doesn't contain an error so we panic if one is encountered
		if err6 != nil {
			panic(err6)
		}
		i.module.Memory().WriteUint32Le(base+12, uint32(len6))
		i.module.Memory().WriteUint32Le(base+8, uint32(ptr6))
		memory7 := i.module.Memory()
		realloc7 := i.module.ExportedFunction("cabi_realloc")
		ptr7, len7, err7 := writeString(ctx, toolCallId4, memory7, realloc7)
		// The return type doesn't contain an error so we panic if one is encountered
		if err7 != nil {
			panic(err7)
		}
		i.module.Memory().WriteUint32Le(base+20, uint32(len7))
		i.module.Memory().WriteUint32Le(base+16, uint32(ptr7))
		vec12 := toolCalls4
		len12 := uint64(len(vec12))
		result12, err12 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len12*24)
		// The return type doesn't contain an error so we panic if one is encountered
		if err12 != nil {
			panic(err12)
		}
		ptr12 := result12[0]
		for idx := uint64(0); idx < len12; idx++ {
			e := vec12[idx]
			base := uint32(ptr12 + uint64(idx)*uint64(24))
			id8 := e.Id
			name8 := e.Name
			arguments8 := e.Arguments
			memory9 := i.module.Memory()
			realloc9 := i.module.ExportedFunction("cabi_realloc")
			ptr9, len9, err9 := writeString(ctx, id8, memory9, realloc9)
			// The return type doesn't contain an error so we panic if one is encountered
			if err9 != nil {
				panic(err9)
			}
			i.module.Memory().WriteUint32Le(base+4, uint32(len9))
			i.module.Memory().WriteUint32Le(base+0, uint32(ptr9))
			memory10 := i.module.Memory()
			realloc10 := i.module.ExportedFunction("cabi_realloc")
			ptr10, len10, err10 := writeString(ctx, name8, memory10, realloc10)
			// The return type doesn't contain an error so we panic if one is encountered
			if err10 != nil {
				panic(err10)
			}
			i.module.Memory().WriteUint32Le(base+12, uint32(len10))
			i.module.Memory().WriteUint32Le(base+8, uint32(ptr10))
			memory11 := i.module.Memory()
			realloc11 := i.module.ExportedFunction("cabi_realloc")
			ptr11, len11, err11 := writeString(ctx, arguments8, memory11, realloc11)
			// The return type doesn't contain an error so we panic if one is encountered
			if err11 != nil {
				panic(err11)
			}
			i.module.Memory().WriteUint32Le(base+20, uint32(len11))
			i.module.Memory().WriteUint32Le(base+16, uint32(ptr11))
		}
		i.module.Memory().WriteUint32Le(base+28, uint32(len12))
		i.module.Memory().WriteUint32Le(base+24, uint32(ptr12))
	}
	memory14 := i.module.Memory()
	realloc14 := i.module.ExportedFunction("cabi_realloc")
	ptr14, len14, err14 := writeString(ctx, overviewPath0, memory14, realloc14)
	// The return type doesn't contain an error so we panic if one is encountered
	if err14 != nil {
		panic(err14)
	}
	memory15 := i.module.Memory()
	realloc15 := i.module.ExportedFunction("cabi_realloc")
	ptr15, len15, err15 := writeString(ctx, detailPath0, memory15, realloc15)
	// The return type doesn't contain an error so we panic if one is encountered
	if err15 != nil {
		panic(err15)
	}
	raw16, err16 := i.module.ExportedFunction("context-assemble").Call(ctx, uint64(ptr1), uint64(len1), uint64(ptr2), uint64(len2), uint64(ptr3), uint64(len3), uint64(ptr13), uint64(len13), uint64(activeTurn0), uint64(historyMode0), uint64(lastN0), uint64(ptr14), uint64(len14), uint64(ptr15), uint64(len15))
	// The return type doesn't contain an error so we panic if one is encountered
	if err16 != nil {
		panic(err16)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_context-assemble").Call(ctx, raw16...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results16 := raw16[0]
	ptr17, ok17 := i.module.Memory().ReadUint32Le(uint32(results16 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok17 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len18, ok18 := i.module.Memory().ReadUint32Le(uint32(results16 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok18 {
		panic(errors.New("failed to read length from memory"))
	}
	base42 := ptr17
	len42 := len18
	result42 := make([]ChatMessage, len42)
	for idx42 := uint32(0); idx42 < len42; idx42++ {
		base := base42 + idx42*32
		ptr19, ok19 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok19 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len20, ok20 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok20 {
			panic(errors.New("failed to read length from memory"))
		}
		buf21, ok21 := i.module.Memory().Read(ptr19, len20)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok21 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str21 := string(buf21)
		ptr22, ok22 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok22 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len23, ok23 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok23 {
			panic(errors.New("failed to read length from memory"))
		}
		buf24, ok24 := i.module.Memory().Read(ptr22, len23)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok24 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str24 := string(buf24)
		ptr25, ok25 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok25 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len26, ok26 := i.module.Memory().ReadUint32Le(uint32(base + 20))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok26 {
			panic(errors.New("failed to read length from memory"))
		}
		buf27, ok27 := i.module.Memory().Read(ptr25, len26)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok27 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str27 := string(buf27)
		ptr28, ok28 := i.module.Memory().ReadUint32Le(uint32(base + 24))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok28 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len29, ok29 := i.module.Memory().ReadUint32Le(uint32(base + 28))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok29 {
			panic(errors.New("failed to read length from memory"))
		}
		base40 := ptr28
		len40 := len29
		result40 := make([]ToolCall, len40)
		for idx40 := uint32(0); idx40 < len40; idx40++ {
			base := base40 + idx40*24
			ptr30, ok30 := i.module.Memory().ReadUint32Le(uint32(base + 0))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok30 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len31, ok31 := i.module.Memory().ReadUint32Le(uint32(base + 4))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok31 {
				panic(errors.New("failed to read length from memory"))
			}
			buf32, ok32 := i.module.Memory().Read(ptr30, len31)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok32 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str32 := string(buf32)
			ptr33, ok33 := i.module.Memory().ReadUint32Le(uint32(base + 8))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok33 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len34, ok34 := i.module.Memory().ReadUint32Le(uint32(base + 12))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok34 {
				panic(errors.New("failed to read length from memory"))
			}
			buf35, ok35 := i.module.Memory().Read(ptr33, len34)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok35 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str35 := string(buf35)
			ptr36, ok36 := i.module.Memory().ReadUint32Le(uint32(base + 16))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok36 {
				panic(errors.New("failed to read pointer from memory"))
			}
			len37, ok37 := i.module.Memory().ReadUint32Le(uint32(base + 20))
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok37 {
				panic(errors.New("failed to read length from memory"))
			}
			buf38, ok38 := i.module.Memory().Read(ptr36, len37)
			// The return type doesn't contain an error so we panic if one is encountered
			if !ok38 {
				panic(errors.New("failed to read bytes from memory"))
			}
			str38 := string(buf38)
			value39 := ToolCall{
				Id:        str32,
				Name:      str35,
				Arguments: str38,
			}
			result40[idx40] = value39
		}
		value41 := ChatMessage{
			Role:       str21,
			Content:    str24,
			ToolCallId: str27,
			ToolCalls:  result40,
		}
		result42[idx42] = value41
	}
	return result42
}

func (i *EngineGoInstance) ContextMeta(
	ctx context.Context,
	stats ContextStats,
) string {
	arg0 := stats
	tokensUsed0 := arg0.TokensUsed
	tokensMax0 := arg0.TokensMax
	messagesInHistory0 := arg0.MessagesInHistory
	workingMemorySize0 := arg0.WorkingMemorySize
	roundsSinceUpdate0 := arg0.RoundsSinceUpdate
	remindAfterRounds0 := arg0.RemindAfterRounds
	strongReminderTokens0 := arg0.StrongReminderTokens
	compactAt0 := arg0.CompactAt
	compactionNotice0 := arg0.CompactionNotice
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, compactionNotice0, memory1, realloc1)
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}
	raw2, err2 := i.module.ExportedFunction("context-meta").Call(ctx, uint64(tokensUsed0), uint64(tokensMax0), uint64(messagesInHistory0), uint64(workingMemorySize0), uint64(roundsSinceUpdate0), uint64(remindAfterRounds0), uint64(strongReminderTokens0), uint64(compactAt0), uint64(ptr1), uint64(len1))
	// The return type doesn't contain an error so we panic if one is encountered
	if err2 != nil {
		panic(err2)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_context-meta").Call(ctx, raw2...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results2 := raw2[0]
	ptr3, ok3 := i.module.Memory().ReadUint32Le(uint32(results2 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len4, ok4 := i.module.Memory().ReadUint32Le(uint32(results2 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok4 {
		panic(errors.New("failed to read length from memory"))
	}
	buf5, ok5 := i.module.Memory().Read(ptr3, len4)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok5 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str5 := string(buf5)
	return str5
}

func (i *EngineGoInstance) ContextOverviewMaintained(
	ctx context.Context,
	overview string,
) (bool, error) {
	arg0 := overview
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	if err0 != nil {
		var default0 bool
		return default0, err0
	}
	raw1, err1 := i.module.ExportedFunction("context-overview-maintained").Call(ctx, uint64(ptr0), uint64(len0))
	if err1 != nil {
		var default1 bool
		return default1, err1
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_context-overview-maintained").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	if !ok2 {
		var default2 bool
		return default2, errors.New("failed to read byte from memory")
	}
	var value8 bool
	var err8 error
	switch value2 {
	case 0:
		value3, ok3 := i.module.Memory().ReadByte(uint32(results1 + 4))
		if !ok3 {
			var default3 bool
			return default3, errors.New("failed to read byte from memory")
		}
		value4 := value3 != 0
		value8 = value4
	case 1:
		ptr5, ok5 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok5 {
			var default5 bool
			return default5, errors.New("failed to read pointer from memory")
		}
		len6, ok6 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok6 {
			var default6 bool
			return default6, errors.New("failed to read length from memory")
		}
		buf7, ok7 := i.module.Memory().Read(ptr5, len6)
		if !ok7 {
			var default7 bool
			return default7, errors.New("failed to read bytes from memory")
		}
		str7 := string(buf7)
		err8 = errors.New(str7)
	default:
		err8 = errors.New("invalid variant discriminant for expected")
	}
	return value8, err8
}

func (i *EngineGoInstance) BoardCreate(
	ctx context.Context,
	id string,
	name string,
	goal string,
	constraints []string,
	memoryCoreRefs []string,
	now string,
) (uint32, error) {
	arg0 := id
	arg1 := name
	arg2 := goal
	arg3 := constraints
	arg4 := memoryCoreRefs
	arg5 := now
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	if err0 != nil {
		var default0 uint32
		return default0, err0
	}
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, arg1, memory1, realloc1)
	if err1 != nil {
		var default1 uint32
		return default1, err1
	}
	memory2 := i.module.Memory()
	realloc2 := i.module.ExportedFunction("cabi_realloc")
	ptr2, len2, err2 := writeString(ctx, arg2, memory2, realloc2)
	if err2 != nil {
		var default2 uint32
		return default2, err2
	}
	vec4 := arg3
	len4 := uint64(len(vec4))
	result4, err4 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len4*8)
	if err4 != nil {
		var default4 uint32
		return default4, err4
	}
	ptr4 := result4[0]
	for idx := uint64(0); idx < len4; idx++ {
		e := vec4[idx]
		base := uint32(ptr4 + uint64(idx)*uint64(8))
		memory3 := i.module.Memory()
		realloc3 := i.module.ExportedFunction("cabi_realloc")
		ptr3, len3, err3 := writeString(ctx, e, memory3, realloc3)
		if err3 != nil {
			var default3 uint32
			return default3, err3
		}
		i.module.Memory().WriteUint32Le(base+4, uint32(len3))
		i.module.Memory().WriteUint32Le(base+0, uint32(ptr3))
	}
	vec6 := arg4
	len6 := uint64(len(vec6))
	result6, err6 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len6*8)
	if err6 != nil {
		var default6 uint32
		return default6, err6
	}
	ptr6 := result6[0]
	for idx := uint64(0); idx < len6; idx++ {
		e := vec6[idx]
		base := uint32(ptr6 + uint64(idx)*uint64(8))
		memory5 := i.module.Memory()
		realloc5 := i.module.ExportedFunction("cabi_realloc")
		ptr5, len5, err5 := writeString(ctx, e, memory5, realloc5)
		if err5 != nil {
			var default5 uint32
			return default5, err5
		}
		i.module.Memory().WriteUint32Le(base+4, uint32(len5))
		i.module.Memory().WriteUint32Le(base+0, uint32(ptr5))
	}
	memory7 := i.module.Memory()
	realloc7 := i.module.ExportedFunction("cabi_realloc")
	ptr7, len7, err7 := writeString(ctx, arg5, memory7, realloc7)
	if err7 != nil {
		var default7 uint32
		return default7, err7
	}
	raw8, err8 := i.module.ExportedFunction("board-create").Call(ctx, uint64(ptr0), uint64(len0), uint64(ptr1), uint64(len1), uint64(ptr2), uint64(len2), uint64(ptr4), uint64(len4), uint64(ptr6), uint64(len6), uint64(ptr7), uint64(len7))
	if err8 != nil {
		var default8 uint32
		return default8, err8
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-create").Call(ctx, raw8...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results8 := raw8[0]
	value9, ok9 := i.module.Memory().ReadByte(uint32(results8 + 0))
	if !ok9 {
		var default9 uint32
		return default9, errors.New("failed to read byte from memory")
	}
	var value15 uint32
	var err15 error
	switch value9 {
	case 0:
		value10, ok10 := i.module.Memory().ReadUint32Le(uint32(results8 + 4))
		if !ok10 {
			var default10 uint32
			return default10, errors.New("failed to read i32 from memory")
		}
		result11 := uint32(value10)
		value15 = result11
	case 1:
		ptr12, ok12 := i.module.Memory().ReadUint32Le(uint32(results8 + 4))
		if !ok12 {
			var default12 uint32
			return default12, errors.New("failed to read pointer from memory")
		}
		len13, ok13 := i.module.Memory().ReadUint32Le(uint32(results8 + 8))
		if !ok13 {
			var default13 uint32
			return default13, errors.New("failed to read length from memory")
		}
		buf14, ok14 := i.module.Memory().Read(ptr12, len13)
		if !ok14 {
			var default14 uint32
			return default14, errors.New("failed to read bytes from memory")
		}
		str14 := string(buf14)
		err15 = errors.New(str14)
	default:
		err15 = errors.New("invalid variant discriminant for expected")
	}
	return value15, err15
}

func (i *EngineGoInstance) BoardLoad(
	ctx context.Context,
	state string,
) (uint32, error) {
	arg0 := state
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	if err0 != nil {
		var default0 uint32
		return default0, err0
	}
	raw1, err1 := i.module.ExportedFunction("board-load").Call(ctx, uint64(ptr0), uint64(len0))
	if err1 != nil {
		var default1 uint32
		return default1, err1
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-load").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	if !ok2 {
		var default2 uint32
		return default2, errors.New("failed to read byte from memory")
	}
	var value8 uint32
	var err8 error
	switch value2 {
	case 0:
		value3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok3 {
			var default3 uint32
			return default3, errors.New("failed to read i32 from memory")
		}
		result4 := uint32(value3)
		value8 = result4
	case 1:
		ptr5, ok5 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok5 {
			var default5 uint32
			return default5, errors.New("failed to read pointer from memory")
		}
		len6, ok6 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok6 {
			var default6 uint32
			return default6, errors.New("failed to read length from memory")
		}
		buf7, ok7 := i.module.Memory().Read(ptr5, len6)
		if !ok7 {
			var default7 uint32
			return default7, errors.New("failed to read bytes from memory")
		}
		str7 := string(buf7)
		err8 = errors.New(str7)
	default:
		err8 = errors.New("invalid variant discriminant for expected")
	}
	return value8, err8
}

func (i *EngineGoInstance) BoardDrop(
	ctx context.Context,
	board uint32,
) error {
	arg0 := board
	raw0, err0 := i.module.ExportedFunction("board-drop").Call(ctx, uint64(arg0))
	if err0 != nil {
		return err0
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-drop").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	value1, ok1 := i.module.Memory().ReadByte(uint32(results0 + 0))
	if !ok1 {
		return errors.New("failed to read byte from memory")
	}
	var err5 error
	switch value1 {
	case 0:
	case 1:
		ptr2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
		if !ok2 {
			return errors.New("failed to read pointer from memory")
		}
		len3, ok3 := i.module.Memory().ReadUint32Le(uint32(results0 + 8))
		if !ok3 {
			return errors.New("failed to read length from memory")
		}
		buf4, ok4 := i.module.Memory().Read(ptr2, len3)
		if !ok4 {
			return errors.New("failed to read bytes from memory")
		}
		str4 := string(buf4)
		err5 = errors.New(str4)
	default:
		err5 = errors.New("invalid variant discriminant for expected")
	}
	return err5
}

func (i *EngineGoInstance) BoardSave(
	ctx context.Context,
	board uint32,
) string {
	arg0 := board
	raw0, err0 := i.module.ExportedFunction("board-save").Call(ctx, uint64(arg0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-save").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	ptr1, ok1 := i.module.Memory().ReadUint32Le(uint32(results0 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok1 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read length from memory"))
	}
	buf3, ok3 := i.module.Memory().Read(ptr1, len2)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str3 := string(buf3)
	return str3
}

func (i *EngineGoInstance) BoardRevision(
	ctx context.Context,
	board uint32,
) (uint32, error) {
	arg0 := board
	raw0, err0 := i.module.ExportedFunction("board-revision").Call(ctx, uint64(arg0))
	if err0 != nil {
		var default0 uint32
		return default0, err0
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-revision").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	value1, ok1 := i.module.Memory().ReadByte(uint32(results0 + 0))
	if !ok1 {
		var default1 uint32
		return default1, errors.New("failed to read byte from memory")
	}
	var value7 uint32
	var err7 error
	switch value1 {
	case 0:
		value2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
		if !ok2 {
			var default2 uint32
			return default2, errors.New("failed to read i32 from memory")
		}
		result3 := uint32(value2)
		value7 = result3
	case 1:
		ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
		if !ok4 {
			var default4 uint32
			return default4, errors.New("failed to read pointer from memory")
		}
		len5, ok5 := i.module.Memory().ReadUint32Le(uint32(results0 + 8))
		if !ok5 {
			var default5 uint32
			return default5, errors.New("failed to read length from memory")
		}
		buf6, ok6 := i.module.Memory().Read(ptr4, len5)
		if !ok6 {
			var default6 uint32
			return default6, errors.New("failed to read bytes from memory")
		}
		str6 := string(buf6)
		err7 = errors.New(str6)
	default:
		err7 = errors.New("invalid variant discriminant for expected")
	}
	return value7, err7
}

func (i *EngineGoInstance) BoardApply(
	ctx context.Context,
	board uint32,
	actor string,
	now string,
	op string,
) (BoardApplied, error) {
	arg0 := board
	arg1 := actor
	arg2 := now
	arg3 := op
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	if err0 != nil {
		var default0 BoardApplied
		return default0, err0
	}
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, arg2, memory1, realloc1)
	if err1 != nil {
		var default1 BoardApplied
		return default1, err1
	}
	memory2 := i.module.Memory()
	realloc2 := i.module.ExportedFunction("cabi_realloc")
	ptr2, len2, err2 := writeString(ctx, arg3, memory2, realloc2)
	if err2 != nil {
		var default2 BoardApplied
		return default2, err2
	}
	raw3, err3 := i.module.ExportedFunction("board-apply").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0), uint64(ptr1), uint64(len1), uint64(ptr2), uint64(len2))
	if err3 != nil {
		var default3 BoardApplied
		return default3, err3
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-apply").Call(ctx, raw3...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results3 := raw3[0]
	value4, ok4 := i.module.Memory().ReadByte(uint32(results3 + 0))
	if !ok4 {
		var default4 BoardApplied
		return default4, errors.New("failed to read byte from memory")
	}
	var value14 BoardApplied
	var err14 error
	switch value4 {
	case 0:
		value5, ok5 := i.module.Memory().ReadUint32Le(uint32(results3 + 4))
		if !ok5 {
			var default5 BoardApplied
			return default5, errors.New("failed to read i32 from memory")
		}
		result6 := uint32(value5)
		ptr7, ok7 := i.module.Memory().ReadUint32Le(uint32(results3 + 8))
		if !ok7 {
			var default7 BoardApplied
			return default7, errors.New("failed to read pointer from memory")
		}
		len8, ok8 := i.module.Memory().ReadUint32Le(uint32(results3 + 12))
		if !ok8 {
			var default8 BoardApplied
			return default8, errors.New("failed to read length from memory")
		}
		buf9, ok9 := i.module.Memory().Read(ptr7, len8)
		if !ok9 {
			var default9 BoardApplied
			return default9, errors.New("failed to read bytes from memory")
		}
		str9 := string(buf9)
		value10 := BoardApplied{
			Revision: result6,
			Event:    str9,
		}
		value14 = value10
	case 1:
		ptr11, ok11 := i.module.Memory().ReadUint32Le(uint32(results3 + 4))
		if !ok11 {
			var default11 BoardApplied
			return default11, errors.New("failed to read pointer from memory")
		}
		len12, ok12 := i.module.Memory().ReadUint32Le(uint32(results3 + 8))
		if !ok12 {
			var default12 BoardApplied
			return default12, errors.New("failed to read length from memory")
		}
		buf13, ok13 := i.module.Memory().Read(ptr11, len12)
		if !ok13 {
			var default13 BoardApplied
			return default13, errors.New("failed to read bytes from memory")
		}
		str13 := string(buf13)
		err14 = errors.New(str13)
	default:
		err14 = errors.New("invalid variant discriminant for expected")
	}
	return value14, err14
}

func (i *EngineGoInstance) BoardReplay(
	ctx context.Context,
	board uint32,
	event string,
) (uint32, error) {
	arg0 := board
	arg1 := event
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	if err0 != nil {
		var default0 uint32
		return default0, err0
	}
	raw1, err1 := i.module.ExportedFunction("board-replay").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0))
	if err1 != nil {
		var default1 uint32
		return default1, err1
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-replay").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	if !ok2 {
		var default2 uint32
		return default2, errors.New("failed to read byte from memory")
	}
	var value8 uint32
	var err8 error
	switch value2 {
	case 0:
		value3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok3 {
			var default3 uint32
			return default3, errors.New("failed to read i32 from memory")
		}
		result4 := uint32(value3)
		value8 = result4
	case 1:
		ptr5, ok5 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok5 {
			var default5 uint32
			return default5, errors.New("failed to read pointer from memory")
		}
		len6, ok6 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok6 {
			var default6 uint32
			return default6, errors.New("failed to read length from memory")
		}
		buf7, ok7 := i.module.Memory().Read(ptr5, len6)
		if !ok7 {
			var default7 uint32
			return default7, errors.New("failed to read bytes from memory")
		}
		str7 := string(buf7)
		err8 = errors.New(str7)
	default:
		err8 = errors.New("invalid variant discriminant for expected")
	}
	return value8, err8
}

func (i *EngineGoInstance) BoardView(
	ctx context.Context,
	board uint32,
	name string,
	arg string,
) (string, error) {
	arg0 := board
	arg1 := name
	arg2 := arg
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	if err0 != nil {
		var default0 string
		return default0, err0
	}
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, arg2, memory1, realloc1)
	if err1 != nil {
		var default1 string
		return default1, err1
	}
	raw2, err2 := i.module.ExportedFunction("board-view").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0), uint64(ptr1), uint64(len1))
	if err2 != nil {
		var default2 string
		return default2, err2
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-view").Call(ctx, raw2...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results2 := raw2[0]
	value3, ok3 := i.module.Memory().ReadByte(uint32(results2 + 0))
	if !ok3 {
		var default3 string
		return default3, errors.New("failed to read byte from memory")
	}
	var value10 string
	var err10 error
	switch value3 {
	case 0:
		ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(results2 + 4))
		if !ok4 {
			var default4 string
			return default4, errors.New("failed to read pointer from memory")
		}
		len5, ok5 := i.module.Memory().ReadUint32Le(uint32(results2 + 8))
		if !ok5 {
			var default5 string
			return default5, errors.New("failed to read length from memory")
		}
		buf6, ok6 := i.module.Memory().Read(ptr4, len5)
		if !ok6 {
			var default6 string
			return default6, errors.New("failed to read bytes from memory")
		}
		str6 := string(buf6)
		value10 = str6
	case 1:
		ptr7, ok7 := i.module.Memory().ReadUint32Le(uint32(results2 + 4))
		if !ok7 {
			var default7 string
			return default7, errors.New("failed to read pointer from memory")
		}
		len8, ok8 := i.module.Memory().ReadUint32Le(uint32(results2 + 8))
		if !ok8 {
			var default8 string
			return default8, errors.New("failed to read length from memory")
		}
		buf9, ok9 := i.module.Memory().Read(ptr7, len8)
		if !ok9 {
			var default9 string
			return default9, errors.New("failed to read bytes from memory")
		}
		str9 := string(buf9)
		err10 = errors.New(str9)
	default:
		err10 = errors.New("invalid variant discriminant for expected")
	}
	return value10, err10
}

func (i *EngineGoInstance) BoardBrief(
	ctx context.Context,
	board uint32,
	task string,
) (string, error) {
	arg0 := board
	arg1 := task
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg1, memory0, realloc0)
	if err0 != nil {
		var default0 string
		return default0, err0
	}
	raw1, err1 := i.module.ExportedFunction("board-brief").Call(ctx, uint64(arg0), uint64(ptr0), uint64(len0))
	if err1 != nil {
		var default1 string
		return default1, err1
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_board-brief").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	if !ok2 {
		var default2 string
		return default2, errors.New("failed to read byte from memory")
	}
	var value9 string
	var err9 error
	switch value2 {
	case 0:
		ptr3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok3 {
			var default3 string
			return default3, errors.New("failed to read pointer from memory")
		}
		len4, ok4 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok4 {
			var default4 string
			return default4, errors.New("failed to read length from memory")
		}
		buf5, ok5 := i.module.Memory().Read(ptr3, len4)
		if !ok5 {
			var default5 string
			return default5, errors.New("failed to read bytes from memory")
		}
		str5 := string(buf5)
		value9 = str5
	case 1:
		ptr6, ok6 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok6 {
			var default6 string
			return default6, errors.New("failed to read pointer from memory")
		}
		len7, ok7 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok7 {
			var default7 string
			return default7, errors.New("failed to read length from memory")
		}
		buf8, ok8 := i.module.Memory().Read(ptr6, len7)
		if !ok8 {
			var default8 string
			return default8, errors.New("failed to read bytes from memory")
		}
		str8 := string(buf8)
		err9 = errors.New(str8)
	default:
		err9 = errors.New("invalid variant discriminant for expected")
	}
	return value9, err9
}

func (i *EngineGoInstance) DocumentValidate(
	ctx context.Context,
	text []uint32,
	maxBytes uint32,
) error {
	arg0 := text
	arg1 := maxBytes
	vec0 := arg0
	len0 := uint64(len(vec0))
	result0, err0 := i.module.ExportedFunction("cabi_realloc").Call(ctx, 0, 0, 4, len0*4)
	if err0 != nil {
		return err0
	}
	ptr0 := result0[0]
	for idx := uint64(0); idx < len0; idx++ {
		e := vec0[idx]
		base := uint32(ptr0 + uint64(idx)*uint64(4))
		i.module.Memory().WriteUint32Le(base+0, e)
	}
	raw1, err1 := i.module.ExportedFunction("document-validate").Call(ctx, uint64(ptr0), uint64(len0), uint64(arg1))
	if err1 != nil {
		return err1
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_document-validate").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	value2, ok2 := i.module.Memory().ReadByte(uint32(results1 + 0))
	if !ok2 {
		return errors.New("failed to read byte from memory")
	}
	var err6 error
	switch value2 {
	case 0:
	case 1:
		ptr3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
		if !ok3 {
			return errors.New("failed to read pointer from memory")
		}
		len4, ok4 := i.module.Memory().ReadUint32Le(uint32(results1 + 8))
		if !ok4 {
			return errors.New("failed to read length from memory")
		}
		buf5, ok5 := i.module.Memory().Read(ptr3, len4)
		if !ok5 {
			return errors.New("failed to read bytes from memory")
		}
		str5 := string(buf5)
		err6 = errors.New(str5)
	default:
		err6 = errors.New("invalid variant discriminant for expected")
	}
	return err6
}

func (i *EngineGoInstance) DocumentSections(
	ctx context.Context,
	text string,
) []DocumentSection {
	arg0 := text
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}
	raw1, err1 := i.module.ExportedFunction("document-sections").Call(ctx, uint64(ptr0), uint64(len0))
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_document-sections").Call(ctx, raw1...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results1 := raw1[0]
	ptr2, ok2 := i.module.Memory().ReadUint32Le(uint32(results1 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len3, ok3 := i.module.Memory().ReadUint32Le(uint32(results1 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read length from memory"))
	}
	base13 := ptr2
	len13 := len3
	result13 := make([]DocumentSection, len13)
	for idx13 := uint32(0); idx13 < len13; idx13++ {
		base := base13 + idx13*20
		ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(base + 0))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok4 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len5, ok5 := i.module.Memory().ReadUint32Le(uint32(base + 4))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok5 {
			panic(errors.New("failed to read length from memory"))
		}
		buf6, ok6 := i.module.Memory().Read(ptr4, len5)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok6 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str6 := string(buf6)
		ptr7, ok7 := i.module.Memory().ReadUint32Le(uint32(base + 8))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok7 {
			panic(errors.New("failed to read pointer from memory"))
		}
		len8, ok8 := i.module.Memory().ReadUint32Le(uint32(base + 12))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok8 {
			panic(errors.New("failed to read length from memory"))
		}
		buf9, ok9 := i.module.Memory().Read(ptr7, len8)
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok9 {
			panic(errors.New("failed to read bytes from memory"))
		}
		str9 := string(buf9)
		value10, ok10 := i.module.Memory().ReadUint32Le(uint32(base + 16))
		// The return type doesn't contain an error so we panic if one is encountered
		if !ok10 {
			panic(errors.New("failed to read i32 from memory"))
		}
		result11 := uint32(value10)
		value12 := DocumentSection{
			Name: str6,
			Body: str9,
			Line: result11,
		}
		result13[idx13] = value12
	}
	return result13
}

func (i *EngineGoInstance) DocumentGetSection(
	ctx context.Context,
	text string,
	name string,
) (string, error) {
	arg0 := text
	arg1 := name
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	if err0 != nil {
		var default0 string
		return default0, err0
	}
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, arg1, memory1, realloc1)
	if err1 != nil {
		var default1 string
		return default1, err1
	}
	raw2, err2 := i.module.ExportedFunction("document-get-section").Call(ctx, uint64(ptr0), uint64(len0), uint64(ptr1), uint64(len1))
	if err2 != nil {
		var default2 string
		return default2, err2
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_document-get-section").Call(ctx, raw2...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results2 := raw2[0]
	value3, ok3 := i.module.Memory().ReadByte(uint32(results2 + 0))
	if !ok3 {
		var default3 string
		return default3, errors.New("failed to read byte from memory")
	}
	var value10 string
	var err10 error
	switch value3 {
	case 0:
		ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(results2 + 4))
		if !ok4 {
			var default4 string
			return default4, errors.New("failed to read pointer from memory")
		}
		len5, ok5 := i.module.Memory().ReadUint32Le(uint32(results2 + 8))
		if !ok5 {
			var default5 string
			return default5, errors.New("failed to read length from memory")
		}
		buf6, ok6 := i.module.Memory().Read(ptr4, len5)
		if !ok6 {
			var default6 string
			return default6, errors.New("failed to read bytes from memory")
		}
		str6 := string(buf6)
		value10 = str6
	case 1:
		ptr7, ok7 := i.module.Memory().ReadUint32Le(uint32(results2 + 4))
		if !ok7 {
			var default7 string
			return default7, errors.New("failed to read pointer from memory")
		}
		len8, ok8 := i.module.Memory().ReadUint32Le(uint32(results2 + 8))
		if !ok8 {
			var default8 string
			return default8, errors.New("failed to read length from memory")
		}
		buf9, ok9 := i.module.Memory().Read(ptr7, len8)
		if !ok9 {
			var default9 string
			return default9, errors.New("failed to read bytes from memory")
		}
		str9 := string(buf9)
		err10 = errors.New(str9)
	default:
		err10 = errors.New("invalid variant discriminant for expected")
	}
	return value10, err10
}

func (i *EngineGoInstance) DocumentReplaceSection(
	ctx context.Context,
	text string,
	name string,
	body string,
) string {
	arg0 := text
	arg1 := name
	arg2 := body
	memory0 := i.module.Memory()
	realloc0 := i.module.ExportedFunction("cabi_realloc")
	ptr0, len0, err0 := writeString(ctx, arg0, memory0, realloc0)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}
	memory1 := i.module.Memory()
	realloc1 := i.module.ExportedFunction("cabi_realloc")
	ptr1, len1, err1 := writeString(ctx, arg1, memory1, realloc1)
	// The return type doesn't contain an error so we panic if one is encountered
	if err1 != nil {
		panic(err1)
	}
	memory2 := i.module.Memory()
	realloc2 := i.module.ExportedFunction("cabi_realloc")
	ptr2, len2, err2 := writeString(ctx, arg2, memory2, realloc2)
	// The return type doesn't contain an error so we panic if one is encountered
	if err2 != nil {
		panic(err2)
	}
	raw3, err3 := i.module.ExportedFunction("document-replace-section").Call(ctx, uint64(ptr0), uint64(len0), uint64(ptr1), uint64(len1), uint64(ptr2), uint64(len2))
	// The return type doesn't contain an error so we panic if one is encountered
	if err3 != nil {
		panic(err3)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_document-replace-section").Call(ctx, raw3...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results3 := raw3[0]
	ptr4, ok4 := i.module.Memory().ReadUint32Le(uint32(results3 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok4 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len5, ok5 := i.module.Memory().ReadUint32Le(uint32(results3 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok5 {
		panic(errors.New("failed to read length from memory"))
	}
	buf6, ok6 := i.module.Memory().Read(ptr4, len5)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok6 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str6 := string(buf6)
	return str6
}

func (i *EngineGoInstance) DocumentTemplate(
	ctx context.Context,
) string {
	raw0, err0 := i.module.ExportedFunction("document-template").Call(ctx)
	// The return type doesn't contain an error so we panic if one is encountered
	if err0 != nil {
		panic(err0)
	}

	// The cleanup via `cabi_post_*` cleans up the memory in the guest. By
	// deferring this, we ensure that no memory is corrupted before the function
	// is done accessing it.
	defer func() {
		if _, err := i.module.ExportedFunction("cabi_post_document-template").Call(ctx, raw0...); err != nil {
			// If we get an error during cleanup, something really bad is
			// going on, so we panic. Also, you can't return the error from
			// the `defer`
			panic(errors.New("failed to cleanup"))
		}
	}()

	results0 := raw0[0]
	ptr1, ok1 := i.module.Memory().ReadUint32Le(uint32(results0 + 0))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok1 {
		panic(errors.New("failed to read pointer from memory"))
	}
	len2, ok2 := i.module.Memory().ReadUint32Le(uint32(results0 + 4))
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok2 {
		panic(errors.New("failed to read length from memory"))
	}
	buf3, ok3 := i.module.Memory().Read(ptr1, len2)
	// The return type doesn't contain an error so we panic if one is encountered
	if !ok3 {
		panic(errors.New("failed to read bytes from memory"))
	}
	str3 := string(buf3)
	return str3
}
