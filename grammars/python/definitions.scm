; Definitions in Python. Each pattern captures a whole definition as @definition.<kind> and
; its @name; nesting is derived from ranges. A decorated definition is captured too, and
; being wider than the bare one, its range (decorators included) wins.

(class_definition name: (identifier) @name) @definition.class
(decorated_definition definition: (class_definition name: (identifier) @name)) @definition.class
(function_definition name: (identifier) @name) @definition.function
(decorated_definition definition: (function_definition name: (identifier) @name)) @definition.function
(type_alias_statement left: (type (identifier) @name)) @definition.type

; Names assigned at the top level: UPPER_CASE ones are constants, any other a variable
; (`connections = ConnectionHandler()`, `gettext_lazy = lazy(gettext, str)`); the first
; pattern wins.
(module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))
(module (expression_statement (assignment left: (identifier) @name)) @definition.variable)
; Names assigned in a class's body are its attributes (`objects = Manager()`, `name: str`).
(class_definition
  body: (block (expression_statement (assignment left: (identifier) @name)) @definition.property))
