; Uses of names in C#, by role (see grammars/python/references.scm).

(using_directive) @import
(invocation_expression function: (_) @call)
(object_creation_expression type: (_) @call)
(member_access_expression name: (_) @member)
(base_list) @inherit
