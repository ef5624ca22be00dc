package scorewire

// NormalizeTarget exposes normalizeTarget to the external tests.
var NormalizeTarget = normalizeTarget
