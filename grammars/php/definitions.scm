; Definitions in PHP. `namespace App\Models;` (no braces) holds everything up to the next
; namespace statement: the .file suffix tells the outline to extend it.

(namespace_definition name: (namespace_name) @name body: (compound_statement)) @definition.namespace
(namespace_definition name: (namespace_name) @name !body) @definition.namespace.file
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
(const_declaration (const_element (name) @name)) @definition.constant
