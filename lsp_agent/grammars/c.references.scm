; Uses of names in C (and C++, which adds cpp.references.scm), by role (see
; python.references.scm).

(preproc_include) @import
(call_expression function: (_) @call)
(field_expression field: (_) @member)
