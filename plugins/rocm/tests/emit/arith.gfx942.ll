; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @int_ops(ptr addrspace(1) %p0, i32 %p1) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r0
  %r1 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r1
  %v0 = sub i32 %tid, 32
  store i32 %v0, ptr addrspace(5) %r0
  %v1 = load i32, ptr addrspace(5) %r0
  %v2 = icmp eq i32 %p1, 0
  %v3 = icmp eq i32 %p1, -1
  %v4 = or i1 %v2, %v3
  %v5 = select i1 %v4, i32 1, i32 %p1
  %v6 = sdiv i32 %v1, %v5
  %v7 = sub i32 0, %v1
  %v8 = select i1 %v3, i32 %v7, i32 %v6
  %v9 = srem i32 %v1, %v5
  %v10 = icmp ne i32 %v9, 0
  %v11 = xor i32 %v9, %p1
  %v12 = icmp slt i32 %v11, 0
  %v13 = and i1 %v10, %v12
  %v14 = zext i1 %v13 to i32
  %v15 = sub i32 %v8, %v14
  store i32 %v15, ptr addrspace(5) %r1
  %v16 = load i32, ptr addrspace(5) %r1
  %v17 = sext i32 %tid to i64
  %v18 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v17
  store i32 %v16, ptr addrspace(1) %v18, align 4
  %v19 = load i32, ptr addrspace(5) %r0
  %v20 = icmp eq i32 %p1, 0
  %v21 = icmp eq i32 %p1, -1
  %v22 = or i1 %v20, %v21
  %v23 = select i1 %v22, i32 1, i32 %p1
  %v24 = sdiv i32 %v19, %v23
  %v25 = sub i32 0, %v19
  %v26 = select i1 %v21, i32 %v25, i32 %v24
  %v27 = srem i32 %v19, %v23
  %v28 = icmp ne i32 %v27, 0
  %v29 = xor i32 %v27, %p1
  %v30 = icmp slt i32 %v29, 0
  %v31 = and i1 %v28, %v30
  %v32 = select i1 %v31, i32 %p1, i32 0
  %v33 = add i32 %v27, %v32
  store i32 %v33, ptr addrspace(5) %r1
  %v34 = load i32, ptr addrspace(5) %r1
  %v35 = add i32 64, %tid
  %v36 = sext i32 %v35 to i64
  %v37 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v36
  store i32 %v34, ptr addrspace(1) %v37, align 4
  %v38 = load i32, ptr addrspace(5) %r0
  %v39 = icmp eq i32 %p1, 0
  %v40 = icmp eq i32 %p1, -1
  %v41 = or i1 %v39, %v40
  %v42 = select i1 %v41, i32 1, i32 %p1
  %v43 = sdiv i32 %v38, %v42
  %v44 = sub i32 0, %v38
  %v45 = select i1 %v40, i32 %v44, i32 %v43
  %v46 = srem i32 %v38, %v42
  store i32 %v45, ptr addrspace(5) %r1
  %v47 = load i32, ptr addrspace(5) %r1
  %v48 = add i32 128, %tid
  %v49 = sext i32 %v48 to i64
  %v50 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v49
  store i32 %v47, ptr addrspace(1) %v50, align 4
  %v51 = load i32, ptr addrspace(5) %r0
  %v52 = icmp ult i32 %p1, 32
  %v53 = select i1 %v52, i32 %p1, i32 31
  %v54 = ashr i32 %v51, %v53
  %v55 = load i32, ptr addrspace(5) %r0
  %v56 = icmp ult i32 3, 32
  %v57 = shl i32 %v55, 3
  %v58 = select i1 %v56, i32 %v57, i32 0
  %v59 = add i32 %v54, %v58
  %v60 = load i32, ptr addrspace(5) %r0
  %v61 = sdiv i32 %v60, 4
  %v62 = srem i32 %v60, 4
  %v63 = icmp ne i32 %v62, 0
  %v64 = xor i32 %v62, 4
  %v65 = icmp slt i32 %v64, 0
  %v66 = and i1 %v63, %v65
  %v67 = zext i1 %v66 to i32
  %v68 = sub i32 %v61, %v67
  %v69 = add i32 %v59, %v68
  %v70 = load i32, ptr addrspace(5) %r0
  %v71 = sdiv i32 %v70, -3
  %v72 = srem i32 %v70, -3
  %v73 = icmp ne i32 %v72, 0
  %v74 = xor i32 %v72, -3
  %v75 = icmp slt i32 %v74, 0
  %v76 = and i1 %v73, %v75
  %v77 = select i1 %v76, i32 -3, i32 0
  %v78 = add i32 %v72, %v77
  %v79 = add i32 %v69, %v78
  store i32 %v79, ptr addrspace(5) %r1
  %v80 = load i32, ptr addrspace(5) %r1
  %v81 = add i32 192, %tid
  %v82 = sext i32 %v81 to i64
  %v83 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v82
  store i32 %v80, ptr addrspace(1) %v83, align 4
  ret void
}

define amdgpu_kernel void @float_ops(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2, ptr addrspace(1) %p3) #1 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r0
  %r1 = alloca half, addrspace(5)
  store half 0.0, ptr addrspace(5) %r1
  %r2 = alloca i16, addrspace(5)
  store i16 0, ptr addrspace(5) %r2
  %r3 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r3
  %v0 = sext i32 %tid to i64
  %v1 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v0
  %v2 = load float, ptr addrspace(1) %v1, align 4
  store float %v2, ptr addrspace(5) %r0
  %v3 = sext i32 %tid to i64
  %v4 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v3
  %v5 = load half, ptr addrspace(1) %v4, align 2
  store half %v5, ptr addrspace(5) %r1
  %v6 = sext i32 %tid to i64
  %v7 = getelementptr inbounds i16, ptr addrspace(1) %p2, i64 %v6
  %v8 = load i16, ptr addrspace(1) %v7, align 2
  store i16 %v8, ptr addrspace(5) %r2
  %v9 = load float, ptr addrspace(5) %r0
  %v10 = fpext float %v9 to double
  %v11 = fpext float 0x3FE8000000000000 to double
  %v12 = fdiv double %v10, %v11
  %v13 = call double @llvm.floor.f64(double %v12)
  %v14 = fptrunc double %v13 to float
  %v15 = load half, ptr addrspace(5) %r1
  %v16 = fpext half %v15 to float
  %v17 = fpext float %v16 to double
  %v18 = fpext float 0xC004000000000000 to double
  %v19 = fdiv double %v17, %v18
  %v20 = call double @llvm.floor.f64(double %v19)
  %v21 = fmul double %v20, %v18
  %v22 = fsub double %v17, %v21
  %v23 = fptrunc double %v22 to float
  %v24 = fadd float %v14, %v23
  store float %v24, ptr addrspace(5) %r0
  %v25 = load half, ptr addrspace(5) %r1
  %v26 = fpext half %v25 to float
  %v27 = fpext half 0xH3E00 to float
  %v28 = fmul float %v26, %v27
  %v29 = fptrunc float %v28 to half
  %v30 = load float, ptr addrspace(5) %r0
  %v31 = fptrunc float %v30 to half
  %v32 = fpext half %v29 to float
  %v33 = fpext half %v31 to float
  %v34 = fadd float %v32, %v33
  %v35 = fptrunc float %v34 to half
  store half %v35, ptr addrspace(5) %r1
  %v36 = load i16, ptr addrspace(5) %r2
  %v37 = load i16, ptr addrspace(5) %r2
  %v38 = zext i16 %v36 to i32
  %v39 = shl i32 %v38, 16
  %v40 = bitcast i32 %v39 to float
  %v41 = zext i16 %v37 to i32
  %v42 = shl i32 %v41, 16
  %v43 = bitcast i32 %v42 to float
  %v44 = fmul float %v40, %v43
  %v45 = bitcast float %v44 to i32
  %v46 = lshr i32 %v45, 16
  %v47 = and i32 %v46, 1
  %v48 = add i32 %v47, 32767
  %v49 = add i32 %v45, %v48
  %v50 = lshr i32 %v49, 16
  %v51 = and i32 %v45, 2147483647
  %v52 = icmp ugt i32 %v51, 2139095040
  %v53 = or i32 %v46, 64
  %v54 = select i1 %v52, i32 %v53, i32 %v50
  %v55 = trunc i32 %v54 to i16
  %v56 = load float, ptr addrspace(5) %r0
  %v57 = bitcast float %v56 to i32
  %v58 = lshr i32 %v57, 16
  %v59 = and i32 %v58, 1
  %v60 = add i32 %v59, 32767
  %v61 = add i32 %v57, %v60
  %v62 = lshr i32 %v61, 16
  %v63 = and i32 %v57, 2147483647
  %v64 = icmp ugt i32 %v63, 2139095040
  %v65 = or i32 %v58, 64
  %v66 = select i1 %v64, i32 %v65, i32 %v62
  %v67 = trunc i32 %v66 to i16
  %v68 = zext i16 %v55 to i32
  %v69 = shl i32 %v68, 16
  %v70 = bitcast i32 %v69 to float
  %v71 = zext i16 %v67 to i32
  %v72 = shl i32 %v71, 16
  %v73 = bitcast i32 %v72 to float
  %v74 = call float @llvm.maximum.f32(float %v70, float %v73)
  %v75 = bitcast float %v74 to i32
  %v76 = lshr i32 %v75, 16
  %v77 = and i32 %v76, 1
  %v78 = add i32 %v77, 32767
  %v79 = add i32 %v75, %v78
  %v80 = lshr i32 %v79, 16
  %v81 = and i32 %v75, 2147483647
  %v82 = icmp ugt i32 %v81, 2139095040
  %v83 = or i32 %v76, 64
  %v84 = select i1 %v82, i32 %v83, i32 %v80
  %v85 = trunc i32 %v84 to i16
  %v86 = zext i16 %v85 to i32
  %v87 = shl i32 %v86, 16
  %v88 = bitcast i32 %v87 to float
  %v89 = zext i16 16128 to i32
  %v90 = shl i32 %v89, 16
  %v91 = bitcast i32 %v90 to float
  %v92 = fsub float %v88, %v91
  %v93 = bitcast float %v92 to i32
  %v94 = lshr i32 %v93, 16
  %v95 = and i32 %v94, 1
  %v96 = add i32 %v95, 32767
  %v97 = add i32 %v93, %v96
  %v98 = lshr i32 %v97, 16
  %v99 = and i32 %v93, 2147483647
  %v100 = icmp ugt i32 %v99, 2139095040
  %v101 = or i32 %v94, 64
  %v102 = select i1 %v100, i32 %v101, i32 %v98
  %v103 = trunc i32 %v102 to i16
  store i16 %v103, ptr addrspace(5) %r2
  %v104 = load float, ptr addrspace(5) %r0
  %v105 = fpext float %v104 to double
  %v106 = call i64 @llvm.fptosi.sat.i64.f64(double %v105)
  %v107 = call i64 @llvm.fptoui.sat.i64.f64(double %v105)
  %v108 = fcmp oge double %v105, 0x43E0000000000000
  %v109 = fcmp oge double %v105, 0x43F0000000000000
  %v110 = select i1 %v109, i64 9223372036854775807, i64 %v107
  %v111 = select i1 %v108, i64 %v110, i64 %v106
  %v112 = trunc i64 %v111 to i32
  %v113 = load i16, ptr addrspace(5) %r2
  %v114 = zext i16 %v113 to i32
  %v115 = shl i32 %v114, 16
  %v116 = bitcast i32 %v115 to float
  %v117 = fpext float %v116 to double
  %v118 = call i64 @llvm.fptosi.sat.i64.f64(double %v117)
  %v119 = call i64 @llvm.fptoui.sat.i64.f64(double %v117)
  %v120 = fcmp oge double %v117, 0x43E0000000000000
  %v121 = fcmp oge double %v117, 0x43F0000000000000
  %v122 = select i1 %v121, i64 9223372036854775807, i64 %v119
  %v123 = select i1 %v120, i64 %v122, i64 %v118
  %v124 = trunc i64 %v123 to i32
  %v125 = add i32 %v112, %v124
  store i32 %v125, ptr addrspace(5) %r3
  %v126 = load float, ptr addrspace(5) %r0
  %v127 = sext i32 %tid to i64
  %v128 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v127
  store float %v126, ptr addrspace(1) %v128, align 4
  %v129 = load half, ptr addrspace(5) %r1
  %v130 = sext i32 %tid to i64
  %v131 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v130
  store half %v129, ptr addrspace(1) %v131, align 2
  %v132 = load i16, ptr addrspace(5) %r2
  %v133 = sext i32 %tid to i64
  %v134 = getelementptr inbounds i16, ptr addrspace(1) %p2, i64 %v133
  store i16 %v132, ptr addrspace(1) %v134, align 2
  %v135 = load i32, ptr addrspace(5) %r3
  %v136 = sext i32 %tid to i64
  %v137 = getelementptr inbounds i32, ptr addrspace(1) %p3, i64 %v136
  store i32 %v135, ptr addrspace(1) %v137, align 4
  ret void
}

declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()
declare double @llvm.floor.f64(double)
declare i64 @llvm.fptosi.sat.i64.f64(double)
declare i64 @llvm.fptoui.sat.i64.f64(double)
declare float @llvm.maximum.f32(float, float)

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #1 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
