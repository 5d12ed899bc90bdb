"""The design of a study (pure Python, no Django): the study file, conditions and each participant's plan,
counterbalancing, adaptive procedures, rating scales and text cutting."""
