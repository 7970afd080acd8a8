; Uses of names in C (and C++, which adds grammars/cpp/references.scm), by role (see
; grammars/python/references.scm).

(preproc_include) @import
(call_expression function: (_) @call)
(field_expression field: (_) @member)
