; Definitions in C. Functions capture their whole @declarator: the outline finds the name
; under any pointers (`char **split(…)`) and drops declarators that are not functions.

(function_definition declarator: (_) @declarator) @definition.function
(declaration declarator: (_) @declarator) @definition.function

(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(type_definition  ; a function pointer type: typedef int (*cmp_fn)(const void *, const void *);
  declarator: (function_declarator
    declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))) @definition.type
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro
